//! Interned names: one process-wide copy of each distinct identifier or type text the
//! project index holds ([`Name`]).
//!
//! Pass 1 keeps a summary of every parsed file until the index is built, and those
//! summaries are mostly names: callees, receivers, declared types, parameter names, each
//! repeated across thousands of declarations. A [`Name`] is one pointer (8 bytes; an
//! `Option<Name>` too) to the single copy of its text, so repeats cost a pointer and two
//! names are equal exactly when their pointers are.
//!
//! The copies are never freed: the table only grows, by the distinct names of the files
//! analysed in this process (a language server that runs for a day holds the names of
//! every text it saw, a few MiB on large projects).

use std::collections::HashSet;
use std::sync::{LazyLock, Mutex};

/// An interned text (see the module docs). Dereferences to `str`; hashes and orders as
/// its text does (so a map keyed by `Name` is looked up by `&str`), and compares equal by
/// address, which for interned texts is the same as by content.
#[derive(Clone, Copy)]
pub struct Name(&'static &'static str);

/// The empty text's one copy (seeded into the table, so `Name::from("")` is it too).
static EMPTY: &str = "";

/// Shards of a table, each behind its own lock, chosen by the key's hash: two threads
/// summarising files rarely wait on each other.
const SHARDS: usize = 16;

/// A process-wide set of interned values (`H`, a copyable handle to a leaked value),
/// split into [`SHARDS`] locked shards, each with its own storage `A` for the values it
/// leaks. Values are looked up by what the handle borrows as (`Q`: a text for [`Name`], a
/// recorded call for [`crate::index::SharedCall`], a list for [`crate::index::Shared`]).
pub struct Table<H, A> {
    shards: Vec<Mutex<(HashSet<H, foldhash::fast::RandomState>, A)>>,
}

impl<H: Copy + Eq + std::hash::Hash, A: Default> Table<H, A> {
    pub(crate) fn new() -> Table<H, A> {
        Table {
            shards: (0..SHARDS)
                .map(|_| Mutex::new((HashSet::with_hasher(Default::default()), A::default())))
                .collect(),
        }
    }

    /// The one handle equal to `q`, made by `make` (which leaks a copy of `q` into the
    /// shard's storage) if the table has none yet.
    pub(crate) fn intern<Q>(&self, q: &Q, make: impl FnOnce(&Q, &mut A) -> H) -> H
    where
        H: std::borrow::Borrow<Q>,
        Q: std::hash::Hash + Eq + ?Sized,
    {
        use std::hash::BuildHasher;
        // A hash independent of the shards' own (fixed seed).
        let shard = foldhash::fast::FixedState::with_seed(0x1de3).hash_one(q) as usize % SHARDS;
        // A poisoned lock only means another thread panicked while holding it; the set
        // itself is never left half-updated (insert is the last step).
        let mut guard = self.shards[shard].lock().unwrap_or_else(|p| p.into_inner());
        let (set, storage) = &mut *guard;
        if let Some(h) = set.get(q) {
            return *h;
        }
        let h = make(q, storage);
        set.insert(h);
        h
    }
}

/// Values of type `T` leaked in chunks of [`Slab::CHUNK`] and handed out one by one: one
/// allocation per chunk instead of one per value. A [`Table`] shard owns one, so what it
/// holds is reused by every thread (a language server's runs each start new threads).
pub struct Slab<T: 'static> {
    rest: &'static mut [T],
}

impl<T> Default for Slab<T> {
    fn default() -> Slab<T> {
        Slab { rest: &mut [] }
    }
}

impl<T: Default> Slab<T> {
    const CHUNK: usize = 1024;

    /// `v`, moved into the slab for the life of the process. `T` is never dropped.
    pub(crate) fn alloc(&mut self, v: T) -> &'static T {
        if self.rest.is_empty() {
            self.rest = Box::leak((0..Self::CHUNK).map(|_| T::default()).collect());
        }
        match std::mem::take(&mut self.rest).split_first_mut() {
            Some((first, rest)) => {
                self.rest = rest;
                *first = v;
                first
            }
            None => Box::leak(Box::new(v)),
        }
    }
}

/// Texts leaked in chunks of [`TextSlab::CHUNK`] bytes (zeroed, so the pages of a chunk's
/// unused end are never touched); a text longer than a quarter chunk gets its own.
#[derive(Default)]
pub(crate) struct TextSlab {
    rest: &'static mut [u8],
}

impl TextSlab {
    const CHUNK: usize = 16 * 1024;

    /// A copy of `s` that lives as long as the process.
    fn alloc(&mut self, s: &str) -> &'static str {
        if s.len() > Self::CHUNK / 4 {
            return Box::leak(Box::from(s));
        }
        if self.rest.len() < s.len() {
            self.rest = Box::leak(vec![0u8; Self::CHUNK].into_boxed_slice());
        }
        let (head, rest) = std::mem::take(&mut self.rest).split_at_mut(s.len());
        self.rest = rest;
        head.copy_from_slice(s.as_bytes());
        let head: &'static [u8] = head;
        // Copied from a `str`, so valid UTF-8.
        std::str::from_utf8(head).unwrap_or_else(|_| Box::leak(Box::from(s)))
    }
}

/// A shard's storage of names: their texts, and the cells a [`Name`] points to.
#[derive(Default)]
pub(crate) struct NameStorage {
    texts: TextSlab,
    cells: Slab<&'static str>,
}

static TABLE: LazyLock<Table<Name, NameStorage>> = LazyLock::new(Table::new);

impl Name {
    /// The one copy of `s`, added to the table if it is new.
    pub fn new(s: &str) -> Name {
        if s.is_empty() {
            return Name(&EMPTY);
        }
        TABLE.intern(s, |s, st| {
            let text = st.texts.alloc(s);
            Name(st.cells.alloc(text))
        })
    }

    pub fn as_str(&self) -> &'static str {
        self.0
    }
}

impl Default for Name {
    fn default() -> Name {
        Name(&EMPTY)
    }
}

/// The traits of a handle to an interned value (`$handle(&'static ..)` whose target is
/// `$target`): it dereferences and borrows as the value, is equal to another handle
/// exactly when both point to the same copy (which for interned values is the same as
/// equal content), and hashes and prints as the value does; with `ordered`, it also
/// orders as the value does. For [`Name`], [`crate::index::SharedCall`] and
/// [`crate::index::SharedType`].
macro_rules! interned_handle {
    ($handle:ty, $target:ty, ordered) => {
        crate::name::interned_handle!($handle, $target);

        impl PartialOrd for $handle {
            fn partial_cmp(&self, other: &$handle) -> Option<std::cmp::Ordering> {
                Some(self.cmp(other))
            }
        }

        impl Ord for $handle {
            fn cmp(&self, other: &$handle) -> std::cmp::Ordering {
                if self == other {
                    std::cmp::Ordering::Equal
                } else {
                    (**self).cmp(&**other)
                }
            }
        }
    };
    ($handle:ty, $target:ty) => {
        impl std::ops::Deref for $handle {
            type Target = $target;
            fn deref(&self) -> &$target {
                self.0
            }
        }

        impl std::borrow::Borrow<$target> for $handle {
            fn borrow(&self) -> &$target {
                self.0
            }
        }

        impl PartialEq for $handle {
            fn eq(&self, other: &$handle) -> bool {
                std::ptr::eq(self.0, other.0)
            }
        }

        impl Eq for $handle {}

        impl std::hash::Hash for $handle {
            fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
                std::hash::Hash::hash(&**self, state)
            }
        }

        impl std::fmt::Debug for $handle {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                std::fmt::Debug::fmt(&**self, f)
            }
        }
    };
}

pub(crate) use interned_handle;

interned_handle!(Name, str, ordered);

impl AsRef<str> for Name {
    fn as_ref(&self) -> &str {
        self.0
    }
}

impl std::fmt::Display for Name {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(self.0, f)
    }
}

impl From<&str> for Name {
    fn from(s: &str) -> Name {
        Name::new(s)
    }
}

impl From<&String> for Name {
    fn from(s: &String) -> Name {
        Name::new(s)
    }
}

impl From<String> for Name {
    fn from(s: String) -> Name {
        Name::new(&s)
    }
}

impl serde::Serialize for Name {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.0)
    }
}

impl<'de> serde::Deserialize<'de> for Name {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Name, D::Error> {
        let s = std::borrow::Cow::<'de, str>::deserialize(d)?;
        Ok(Name::new(&s))
    }
}

#[cfg(test)]
mod tests {
    use super::Name;
    use std::collections::HashMap;

    #[test]
    fn equal_texts_share_one_copy_and_compare_by_text() {
        let a = Name::from("chargeCard");
        let b = Name::from(String::from("charge") + "Card");
        assert_eq!(a, b);
        assert!(std::ptr::eq(a.as_str(), b.as_str()));
        assert_ne!(a, Name::from("chargecard"));
        assert_eq!(Name::from(""), Name::default());
        assert!(Name::default().is_empty());
        // Ordered and hashed as the text.
        let mut v = [Name::from("b"), Name::from("a"), Name::from("ab")];
        v.sort();
        assert_eq!(v.map(|n| n.as_str()), ["a", "ab", "b"]);
        let mut m: HashMap<Name, u32> = HashMap::new();
        m.insert(a, 1);
        assert_eq!(m.get("chargeCard"), Some(&1));
        assert_eq!(std::mem::size_of::<Option<Name>>(), 8);
    }

    #[test]
    fn names_made_on_many_threads_are_one_copy_each() {
        let made: Vec<Vec<Name>> = std::thread::scope(|s| {
            let hs: Vec<_> = (0..4)
                .map(|_| {
                    s.spawn(|| {
                        (0..500)
                            .map(|i| Name::from(format!("n{}", i % 50)))
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            hs.into_iter().map(|h| h.join().unwrap()).collect()
        });
        for v in &made[1..] {
            assert_eq!(v, &made[0]);
            for (x, y) in v.iter().zip(&made[0]) {
                assert!(std::ptr::eq(x.as_str(), y.as_str()));
            }
        }
    }

    #[test]
    fn slabs_keep_every_value_across_chunks() {
        let mut texts = super::TextSlab::default();
        let mut cells = super::Slab::<&'static str>::default();
        // Enough to fill several chunks of each, with texts of every size class (a long
        // one gets its own allocation).
        let made: Vec<(String, &'static &'static str)> = (0..5000)
            .map(|i| {
                let s = "x".repeat(i % 37) + &i.to_string();
                let s = if i == 77 { "y".repeat(10_000) } else { s };
                let t = texts.alloc(&s);
                (s, cells.alloc(t))
            })
            .collect();
        for (s, cell) in &made {
            assert_eq!(**cell, s.as_str());
        }
    }

    #[test]
    fn a_name_round_trips_through_json() {
        let n = Name::from("X-Idempotency-Key");
        let s = serde_json::to_string(&n).unwrap();
        assert_eq!(s, "\"X-Idempotency-Key\"");
        let back: Name = serde_json::from_str(&s).unwrap();
        assert_eq!(back, n);
        let escaped: Name = serde_json::from_str("\"a\\\"b\"").unwrap();
        assert_eq!(&*escaped, "a\"b");
    }
}
