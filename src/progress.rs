//! The progress display of `idemlint check` (`--progress`): an `indicatif` bar on a
//! terminal's standard error (files done of the phase's total, the phase), or with
//! `--progress always` off a terminal, one plain line per phase and every few seconds.
//! Never in CI logs unless asked: `auto` shows nothing when standard error is not a
//! terminal or `CI` is set.

use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::check::{Phase, Progress};

/// `--progress`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ProgressChoice {
    /// A bar when standard error is a terminal and `CI` is not set.
    Auto,
    /// Always: a bar on a terminal, plain lines elsewhere.
    Always,
    Never,
}

/// How progress would be shown, if at all.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Style {
    Bar,
    Lines,
}

fn style(choice: ProgressChoice) -> Option<Style> {
    use std::io::IsTerminal;
    let terminal = std::io::stderr().is_terminal();
    let ci = std::env::var_os("CI").is_some_and(|v| !v.is_empty() && v != "false" && v != "0");
    match choice {
        ProgressChoice::Never => None,
        ProgressChoice::Auto if terminal && !ci => Some(Style::Bar),
        ProgressChoice::Auto => None,
        ProgressChoice::Always if terminal => Some(Style::Bar),
        ProgressChoice::Always => Some(Style::Lines),
    }
}

fn phase_name(p: Phase) -> &'static str {
    match p {
        Phase::Reading => "reading",
        Phase::Indexing => "indexing",
        Phase::Checking => "analysing",
    }
}

/// A running display; [`Display::finish`] (or dropping it) stops and clears it.
pub struct Display {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Display {
    /// Starts showing `progress` as `choice` says; `None` when nothing is to be shown.
    pub fn start(choice: ProgressChoice, progress: Arc<Progress>) -> Option<Display> {
        let style = style(choice)?;
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::Builder::new()
            .name("idemlint-progress".into())
            .spawn(move || match style {
                Style::Bar => bar(&progress, &flag),
                Style::Lines => lines(&progress, &flag),
            })
            .ok()?;
        Some(Display {
            stop,
            thread: Some(thread),
        })
    }

    /// Stops the display and clears the bar.
    pub fn finish(mut self) {
        self.stop_now();
    }

    fn stop_now(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for Display {
    fn drop(&mut self) {
        self.stop_now();
    }
}

const TICK: Duration = Duration::from_millis(50);

/// The bar: shown only once a run takes longer than a moment, cleared at the end.
fn bar(progress: &Progress, stop: &AtomicBool) {
    let started = Instant::now();
    let mut bar: Option<indicatif::ProgressBar> = None;
    while !stop.load(Ordering::Relaxed) {
        std::thread::sleep(TICK);
        if bar.is_none() && started.elapsed() < Duration::from_millis(300) {
            continue;
        }
        let b = bar.get_or_insert_with(|| {
            let b = indicatif::ProgressBar::with_draw_target(
                None,
                indicatif::ProgressDrawTarget::stderr_with_hz(10),
            );
            if let Ok(s) = indicatif::ProgressStyle::with_template(
                "{prefix:>9} [{bar:30}] {pos}/{len} files  {elapsed}",
            ) {
                b.set_style(s.progress_chars("=> "));
            }
            b
        });
        let (phase, done, total) = progress.get();
        b.set_prefix(phase_name(phase));
        b.set_length(total as u64);
        b.set_position(done.min(total) as u64);
    }
    if let Some(b) = bar {
        b.finish_and_clear();
    }
}

/// Plain lines (`--progress always` off a terminal): one when a phase starts and at most
/// one every two seconds, a phase's end (all its files done) when the next starts, and the
/// last state at the end.
fn lines(progress: &Progress, stop: &AtomicBool) {
    let mut last: Option<(Phase, usize, Instant, Instant)> = None;
    let print = |phase: Phase, done: usize, total: usize, since: Instant| {
        let line = match phase {
            Phase::Indexing => format!("idemlint: indexing, {} s\n", since.elapsed().as_secs()),
            Phase::Checking => {
                format!("idemlint: analysing {done}/{total} files that can have a finding\n")
            }
            Phase::Reading => format!("idemlint: reading {done}/{total} files\n"),
        };
        let _ = std::io::stderr().write_all(line.as_bytes());
    };
    loop {
        let stopping = stop.load(Ordering::Relaxed);
        let (phase, done, total) = progress.get();
        if !stopping && last.is_none() && phase == Phase::Reading && total == 0 {
            // The run has not started yet.
            std::thread::sleep(TICK);
            continue;
        }
        let (due, since) = match last {
            None => (true, Instant::now()),
            Some((p, t, _, started)) if p != phase => {
                // A phase ends only once all its files are done.
                if p != Phase::Indexing {
                    print(p, t, t, started);
                }
                (true, Instant::now())
            }
            Some((_, _, printed, started)) => (
                printed.elapsed() >= Duration::from_secs(2) || stopping,
                started,
            ),
        };
        if due {
            print(phase, done.min(total), total, since);
        }
        last = Some((
            phase,
            total,
            if due {
                Instant::now()
            } else {
                last.map_or(Instant::now(), |l| l.2)
            },
            since,
        ));
        if stopping {
            break;
        }
        std::thread::sleep(TICK);
    }
}
