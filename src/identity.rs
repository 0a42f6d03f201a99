//! The operation a finding belongs to, for the help's `derive(…)` example: a refund's help
//! says `IdemKey.derive("refund", refundId)`, not a fixed `derive("charge", …)`.
//!
//! The rules write a generic example (`Ctx::derive_example` in `crate::rules`); after they
//! ran, [`personalise_help`] replaces it in each finding's help with one built from the
//! code at the finding: the name of the enclosing function (skipping framework callbacks
//! such as `onFailure` or `intercept`, whose names say nothing about the operation) and
//! the parameters in scope whose names read as identifiers (`orderId`, `customer_id`,
//! `billingPeriod`). Without a usable name or identifier it falls back to placeholder
//! wording (`IdemKey.derive("<operation>", <what identifies it>)`). Purely textual: the
//! analysis and the findings' other fields are untouched.

use crate::finding::Finding;
use crate::model::{FileModel, Language, Param, ScopeKind};

/// An operation as the help names it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Operation {
    /// The derive namespace: the function name in kebab case without a leading verb or a
    /// trailing `loop`/`job`/`task` (`createRefund` → `refund`, `payout_loop` → `payout`);
    /// `None` when no enclosing function has a usable name.
    pub name: Option<String>,
    /// Parameter names in scope that read as identifiers, outermost function first, at
    /// most three, as written.
    pub ids: Vec<String>,
}

/// Function names that are a framework's callback or a generic entry point, not an
/// operation: the next enclosing function is tried instead.
const GENERIC_FUNCTIONS: &[&str] = &[
    "accept",
    "afterResponse",
    "apply",
    "beforeRequest",
    "call",
    "doFilter",
    "execute",
    "filter",
    "get",
    "handle",
    "intercept",
    "invoke",
    "main",
    "onFailure",
    "onResponse",
    "process",
    "proceed",
    "run",
    "tick",
];

/// Leading verbs dropped from a function name when something is left (`createCharge`).
const VERBS: &[&str] = &[
    "create", "do", "execute", "handle", "make", "perform", "post", "process", "run", "send",
    "start", "submit", "try",
];

/// Trailing words dropped when something is left (`payoutLoop`, `billing_job`).
const SUFFIXES: &[&str] = &["loop", "job", "task", "worker", "async", "once"];

/// Words that only join a name to the suffix dropped after them (`chargeWithLoop`,
/// `refund_in_job`).
const CONNECTIVES: &[&str] = &["with", "in", "on", "by", "for", "as", "and", "via"];

/// The operation enclosing byte `offset` of `model`'s file.
pub fn operation_at(model: &FileModel, offset: usize) -> Operation {
    let innermost = model
        .scopes
        .iter()
        .enumerate()
        .filter(|(_, s)| s.span.start <= offset && offset < s.span.end.max(s.span.start + 1))
        .max_by_key(|(i, s)| (s.span.start, *i))
        .map(|(i, _)| i)
        .unwrap_or(0);
    let mut name = None;
    let mut ids: Vec<String> = Vec::new();
    // Innermost first while walking out; reversed below so outer parameters come first.
    let mut groups: Vec<&[Param]> = Vec::new();
    // The items of enclosing `for` loops over a collection, innermost first: a key minted
    // per item must come from the item (one key for a whole batch would be shared by every
    // item of it), so the item comes before any parameter.
    let mut items: Vec<String> = Vec::new();
    for s in model.ancestors(innermost) {
        match &model.scopes[s].kind {
            // Not a retry loop over back-off delays (`for (long delay : BACKOFF)`): its
            // variable changes per attempt. Only the loop's own variable, named in its
            // header (a `catch` parameter of the body is no item).
            ScopeKind::Loop(l) if is_for_each(l) && !crate::classify::is_retry_loop(l) => {
                for b in model.bindings.iter().filter(|b| {
                    b.scope == s
                        && b.kind == crate::model::BindingKind::Param
                        && b.name != "_"
                        && !b.name.starts_with('_')
                        && crate::text::has_word(&l.header, &b.name)
                }) {
                    let item = if is_identifier_name(&b.name) {
                        b.name.clone()
                    } else {
                        format!("<{}'s id>", b.name)
                    };
                    if !items.contains(&item) {
                        items.push(item);
                    }
                }
            }
            ScopeKind::Function(f) => {
                if name.is_none() && !GENERIC_FUNCTIONS.contains(&f.name.as_str()) {
                    name = namespace(&f.name);
                }
                groups.push(&f.params);
            }
            ScopeKind::Lambda(l) => groups.push(&l.params),
            _ => {}
        }
    }
    ids.extend(items.into_iter().take(3));
    let params_in_scope = groups.into_iter().rev().flatten();
    for p in params_in_scope {
        if is_identifier_name(&p.name) && !ids.contains(&p.name) && ids.len() < 3 {
            ids.push(p.name.clone());
        }
    }
    Operation { name, ids }
}

/// Whether `l` is a `for` loop over the items of a collection (`for (Invoice i : due)`,
/// `for (i in due)`, `for i in due`), not a counting loop (`for (int a = 0; a < 3; a++)`,
/// `for (a in 1..3)`, `for _ in 0..3`), whose variable is an attempt number.
fn is_for_each(l: &crate::model::LoopInfo) -> bool {
    l.keyword == "for"
        && !l.header.contains(';')
        && !l.header.contains("..")
        && !l.header.contains(" until ")
        && !l.header.contains(" downTo ")
        && !l.header.contains("indices")
}

/// The `derive(…)` call for `op` in `lang`: `IdemKey.derive("refund", refundId)`,
/// `idemkey::derive("payout", [payout_id])`, with placeholders for what is unknown.
pub fn derive_call(lang: Language, op: &Operation) -> String {
    let name = op.name.as_deref().unwrap_or("<operation>");
    let parts = if op.ids.is_empty() {
        match &op.name {
            Some(n) => format!("<what identifies this {n}>"),
            None => "<what identifies it>".to_string(),
        }
    } else {
        op.ids.join(", ")
    };
    match lang {
        Language::Rust if op.ids.is_empty() => format!("idemkey::derive(\"{name}\", {parts})"),
        Language::Rust => format!("idemkey::derive(\"{name}\", [{parts}])"),
        _ => format!("IdemKey.derive(\"{name}\", {parts})"),
    }
}

/// Replaces `generic`, the rules' `derive(…)` example, in the help of each finding of
/// `model`'s file with the one for the finding's own operation (see the module
/// documentation).
pub fn personalise_help(model: &FileModel, generic: &str, findings: &mut [Finding]) {
    for f in findings.iter_mut() {
        if f.help.contains(generic) {
            let op = operation_at(model, f.span.start);
            f.help = f.help.replace(generic, &derive_call(model.language, &op));
        }
    }
}

/// Ends each help that suggests an idemkey helper with where that helper comes from:
/// idemlint ships it (`crates/idemkey`), no package registry has it. Run after the help is
/// final ([`crate::fix::align_help`] rewrites its tail).
pub fn say_where_helpers_come_from(lang: Language, findings: &mut [Finding]) {
    let origin = match lang {
        Language::Rust => {
            "`idemkey` is idemlint's helper crate (`crates/idemkey` in its repository, as a git dependency)"
        }
        Language::Java | Language::Kotlin => {
            "`IdemKey` is idemlint's helper: copy `crates/idemkey/java/IdemKey.java` from its repository"
        }
    };
    let mention = match lang {
        Language::Rust => "idemkey::",
        _ => "IdemKey.",
    };
    for f in findings.iter_mut() {
        if f.help.contains(mention) && !f.help.contains(origin) {
            f.help = format!("{}; {origin}", f.help.trim_end_matches('.'));
        }
    }
}

/// The words of a camelCase or snake_case identifier, lower-cased.
fn words(name: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut cur = String::new();
    let mut prev_lower = false;
    for c in name.chars() {
        if c == '_' || c == '-' || c == '$' {
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
            prev_lower = false;
            continue;
        }
        if c.is_uppercase() && prev_lower && !cur.is_empty() {
            out.push(std::mem::take(&mut cur));
        }
        prev_lower = c.is_lowercase() || c.is_ascii_digit();
        cur.extend(c.to_lowercase());
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// A function name as a derive namespace (see [`Operation::name`]).
fn namespace(function: &str) -> Option<String> {
    let mut w = words(function.trim_start_matches("r#"));
    if w.len() > 1 && VERBS.contains(&w[0].as_str()) {
        w.remove(0);
    }
    if w.len() > 1 && SUFFIXES.contains(&w[w.len() - 1].as_str()) {
        w.pop();
        // A connective the suffix leaves dangling goes too (`chargeWithLoop` → `charge`).
        while w.len() > 1 && CONNECTIVES.contains(&w[w.len() - 1].as_str()) {
            w.pop();
        }
    }
    if w.is_empty() {
        return None;
    }
    Some(w.join("-"))
}

/// Whether a parameter name reads as an identifier of the operation: `id`, `…Id`,
/// `…_id`, `…Ids`, `…Number`, `…Ref`/`…Reference`, `…Period`, `…Date`; never the
/// idempotency key itself.
fn is_identifier_name(name: &str) -> bool {
    let w = words(name);
    let Some(last) = w.last() else {
        return false;
    };
    if w.iter()
        .any(|x| x.starts_with("idempoten") || x == "key" || x == "dedup")
    {
        return false;
    }
    matches!(
        last.as_str(),
        "id" | "ids" | "number" | "no" | "ref" | "reference" | "period" | "date" | "month"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn namespaces_drop_verbs_and_suffixes() {
        assert_eq!(namespace("createRefund").as_deref(), Some("refund"));
        assert_eq!(namespace("charge").as_deref(), Some("charge"));
        assert_eq!(namespace("payout_loop").as_deref(), Some("payout"));
        assert_eq!(
            namespace("chargeMonthlyInvoice").as_deref(),
            Some("charge-monthly-invoice")
        );
        assert_eq!(namespace("chargeWithLoop").as_deref(), Some("charge"));
        assert_eq!(namespace("refund_in_job").as_deref(), Some("refund"));
        assert_eq!(namespace("payWith").as_deref(), Some("pay-with"));
        // A name that is only a verb stays.
        assert_eq!(namespace("submit").as_deref(), Some("submit"));
    }

    #[test]
    fn identifier_parameters() {
        for yes in [
            "id",
            "orderId",
            "customer_id",
            "refundIds",
            "billingPeriod",
            "invoiceNumber",
            "paymentRef",
        ] {
            assert!(is_identifier_name(yes), "{yes}");
        }
        for no in [
            "api",
            "body",
            "amountCents",
            "idempotencyKey",
            "dedup_id",
            "key",
            "client",
            "video",
        ] {
            assert!(!is_identifier_name(no), "{no}");
        }
    }

    /// A key minted per item of a loop over a collection is derived from the item (the
    /// recall helper's scheduled job over due invoices was told to derive one key for the
    /// whole job); a counting loop's variable is an attempt, never an identity.
    #[test]
    fn loop_items_come_first_and_counters_never() {
        let at = |lang, src: &str, marker: &str| {
            let m = crate::lang::lower(lang, src);
            operation_at(&m, src.find(marker).unwrap())
        };
        let java = "class J { void chargeDue(String runId, List<Invoice> due) { for (Invoice invoice : due) { try { mint(); } catch (RuntimeException e) { log(e); } } for (int attempt = 0; attempt < 3; attempt++) { again(); } for (long delayMs : BACKOFF) { try { retried(); return; } catch (RuntimeException e) { sleep(delayMs); } } } }";
        // A retry loop over back-off delays: its variable is per attempt, its `catch`
        // parameter no item (break-it).
        assert_eq!(at(Language::Java, java, "retried").ids, ["runId"]);
        assert_eq!(
            at(Language::Java, java, "mint").ids,
            ["<invoice's id>", "runId"]
        );
        assert_eq!(at(Language::Java, java, "again").ids, ["runId"]);
        let kotlin = "fun payAll(orders: List<Order>) { for (orderId in orders.map { it.id }) { mint() }\n for (a in 1..3) { again() } }";
        assert_eq!(at(Language::Kotlin, kotlin, "mint").ids, ["orderId"]);
        assert!(at(Language::Kotlin, kotlin, "again").ids.is_empty());
        let rust = "fn pay_all(due: Vec<Invoice>) { for inv in due { mint(); } for _ in 0..3 { again(); } }";
        assert_eq!(at(Language::Rust, rust, "mint").ids, ["<inv's id>"]);
        assert!(at(Language::Rust, rust, "again").ids.is_empty());
    }

    #[test]
    fn derive_calls_per_language() {
        let op = Operation {
            name: Some("refund".into()),
            ids: vec!["refundId".into()],
        };
        assert_eq!(
            derive_call(Language::Java, &op),
            "IdemKey.derive(\"refund\", refundId)"
        );
        let op = Operation {
            name: Some("payout".into()),
            ids: vec!["payout_id".into()],
        };
        assert_eq!(
            derive_call(Language::Rust, &op),
            "idemkey::derive(\"payout\", [payout_id])"
        );
        let op = Operation {
            name: Some("refund".into()),
            ids: vec![],
        };
        assert_eq!(
            derive_call(Language::Kotlin, &op),
            "IdemKey.derive(\"refund\", <what identifies this refund>)"
        );
        let op = Operation {
            name: None,
            ids: vec![],
        };
        assert_eq!(
            derive_call(Language::Rust, &op),
            "idemkey::derive(\"<operation>\", <what identifies it>)"
        );
    }
}
