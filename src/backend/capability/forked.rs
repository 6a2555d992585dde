//! Capability probing that survives the compiler: the triples are probed in a forked child
//! that appends to a journal, one line when it starts a triple and one with its result. When
//! the child dies (a segfault, an abort) or stops making progress (a hang), the triple it had
//! started is probed again, alone and unoptimized, in a child of its own: if that one lives,
//! its result stands (a crash at an optimizing level is for campaigns to find, reduce and
//! report), else the triple is recorded as broken with how the child ended. A new child then goes
//! on from the next triple. The parent never runs the compiler, so it stays clean for the
//! campaign.
//!
//! The child is a plain `fork` without `exec`: it only decodes single-op models and calls the
//! backend, and it ends with `_exit`, never running the parent's destructors.

use super::{Probe, Scope, Triple};
use crate::gen::menu::Choice;
use crate::ops::SpecId;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;
use std::time::{Duration, Instant};

/// How long one triple may take before its child counts as hung.
const TRIPLE_LIMIT: Duration = Duration::from_secs(120);

/// One journal line.
#[derive(Serialize, Deserialize)]
enum Line {
    /// The child starts probing triple number `.0`.
    Start(usize),
    /// Triple number `.0` gave `.1`.
    Done(usize, Probe),
}

/// Probes `probes` with `probe_one`, in forked children; the results in `probes` order.
pub(super) fn probe_all(
    probes: &[(Triple, SpecId, &Choice)],
    probe_one: impl Fn(SpecId, &Choice, Scope) -> Probe,
) -> Vec<(Triple, Probe)> {
    let path = journal_path();
    std::fs::write(&path, b"").expect("a journal in the temporary folder");
    let mut results: BTreeMap<usize, Probe> = BTreeMap::new();
    while results.len() < probes.len() {
        let next = (0..probes.len())
            .find(|i| !results.contains_key(i))
            .unwrap_or(probes.len());
        let ended = in_child(&path, probes, next..probes.len(), Scope::Ends, &probe_one);
        let (started, done) = read(&path);
        results.extend(done);
        if let Some(ended) = ended {
            // The child died: the last triple it started and did not finish killed it.
            let culprit = started.filter(|i| !results.contains_key(i)).unwrap_or(next);
            let alone = culprit..culprit + 1;
            let result = match in_child(&path, probes, alone, Scope::Unoptimized, &probe_one) {
                None => read(&path).1.remove(&culprit),
                Some(_) => None,
            };
            results.insert(culprit, result.unwrap_or(Probe::Broken(ended)));
        }
    }
    let _ = std::fs::remove_file(&path);
    probes
        .iter()
        .enumerate()
        .map(|(i, (t, _, _))| (t.clone(), results.remove(&i).expect("every triple probed")))
        .collect()
}

/// A fresh journal file in the temporary folder.
fn journal_path() -> std::path::PathBuf {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    std::env::temp_dir().join(format!("dlcfuzz-probe-{}-{n}.journal", std::process::id()))
}

/// Probes triples `range` at `scope` in a forked child, journaling to `path`; `None` when the
/// child finished them all, else how it ended.
fn in_child(
    path: &Path,
    probes: &[(Triple, SpecId, &Choice)],
    range: std::ops::Range<usize>,
    scope: Scope,
    probe_one: &impl Fn(SpecId, &Choice, Scope) -> Probe,
) -> Option<String> {
    // SAFETY: the child only probes and writes the journal, then leaves with `_exit`.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        panic!(
            "fork for capability probing failed: {}",
            std::io::Error::last_os_error()
        );
    }
    if pid == 0 {
        child(path, &probes[..range.end], range.start, scope, probe_one);
    }
    wait(pid, path)
}

/// The child: probes from triple `from` on, journaling each, and exits.
fn child(
    path: &Path,
    probes: &[(Triple, SpecId, &Choice)],
    from: usize,
    scope: Scope,
    probe_one: &impl Fn(SpecId, &Choice, Scope) -> Probe,
) -> ! {
    let code = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let mut file = std::fs::OpenOptions::new()
            .append(true)
            .open(path)
            .expect("the journal opens");
        let mut write = |line: &Line| {
            let mut text = serde_json::to_string(line).expect("serializable");
            text.push('\n');
            file.write_all(text.as_bytes())
                .expect("the journal takes a line");
        };
        for (i, (_, spec, choice)) in probes.iter().enumerate().skip(from) {
            write(&Line::Start(i));
            let result = probe_one(*spec, choice, scope);
            write(&Line::Done(i, result));
        }
    }))
    .map_or(101, |()| 0);
    // SAFETY: leaves the child at once, without the parent's atexit handlers or destructors.
    unsafe { libc::_exit(code) }
}

/// Waits for the child `pid`: `None` when it finished every triple, else how it ended (a
/// signal, an exit code, or a hang: no journal progress within [`TRIPLE_LIMIT`]).
fn wait(pid: libc::pid_t, journal: &Path) -> Option<String> {
    let mut size = 0;
    let mut progress = Instant::now();
    loop {
        let mut status = 0;
        // SAFETY: waits for our own child without blocking.
        let r = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
        if r == pid {
            return ended(status);
        }
        let now = std::fs::metadata(journal).map_or(0, |m| m.len());
        if now != size {
            size = now;
            progress = Instant::now();
        } else if progress.elapsed() > TRIPLE_LIMIT {
            // SAFETY: kills and reaps our own child.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
                libc::waitpid(pid, &mut status, 0);
            }
            return Some(format!(
                "the compiler hung probing it (no result in {} s)",
                TRIPLE_LIMIT.as_secs()
            ));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// How a child that ended with `status` died, or `None` when it exited cleanly.
fn ended(status: libc::c_int) -> Option<String> {
    if libc::WIFSIGNALED(status) {
        let signal = libc::WTERMSIG(status);
        return Some(format!(
            "the compiler killed the process probing it (signal {signal}{})",
            match signal {
                libc::SIGSEGV => ", SIGSEGV",
                libc::SIGABRT => ", SIGABRT",
                libc::SIGBUS => ", SIGBUS",
                libc::SIGFPE => ", SIGFPE",
                libc::SIGILL => ", SIGILL",
                _ => "",
            }
        ));
    }
    match libc::WEXITSTATUS(status) {
        0 => None,
        code => Some(format!(
            "the process probing it exited with code {code} (a panic is 101)"
        )),
    }
}

/// The journal: the last triple started, and every result.
fn read(path: &Path) -> (Option<usize>, BTreeMap<usize, Probe>) {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let mut started = None;
    let mut done = BTreeMap::new();
    for line in text.lines() {
        match serde_json::from_str::<Line>(line) {
            Ok(Line::Start(i)) => started = Some(i),
            Ok(Line::Done(i, p)) => {
                done.insert(i, p);
            }
            // A line cut short by the death of its writer.
            Err(_) => {}
        }
    }
    (started, done)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gen::Menu;

    fn probes_of(menu: &Menu, n: usize) -> Vec<(Triple, SpecId, &Choice)> {
        menu.entries
            .iter()
            .flat_map(|e| {
                e.choices.iter().map(move |c| {
                    let t = (format!("{:?}", e.spec), c.sig.key(), c.class.to_string());
                    (t, e.spec, c)
                })
            })
            .take(n)
            .collect()
    }

    #[test]
    fn a_triple_that_kills_the_child_even_unoptimized_is_broken_and_probing_goes_on() {
        let menu = Menu::everything();
        let probes = probes_of(&menu, 6);
        let deadly = probes[2].2;
        let results = probe_all(&probes, |_, choice, _| {
            if std::ptr::eq(choice, deadly) {
                // A test child dying the way a compiler's failed assertion kills it (a raised
                // SIGSEGV would meet std's handler, which lets the first one return).
                std::process::abort();
            }
            Probe::Supported
        });
        assert_eq!(results.len(), 6);
        for (i, (t, p)) in results.iter().enumerate() {
            assert_eq!(t, &probes[i].0);
            match (i, p) {
                (2, Probe::Broken(why)) => assert!(why.contains("SIGABRT"), "{why}"),
                (2, other) => panic!("the deadly triple gave {other:?}"),
                (_, Probe::Supported) => {}
                (_, other) => panic!("triple {i} gave {other:?}"),
            }
        }
    }

    #[test]
    fn a_triple_that_kills_the_child_only_optimized_is_supported() {
        let menu = Menu::everything();
        let probes = probes_of(&menu, 4);
        let deadly = probes[1].2;
        let results = probe_all(&probes, |_, choice, scope| {
            if !std::ptr::eq(choice, deadly) {
                return Probe::Unsupported;
            }
            if scope == Scope::Ends {
                // A test child dying at an optimizing level.
                std::process::abort();
            }
            Probe::Supported
        });
        assert!(
            matches!(results[1].1, Probe::Supported),
            "{:?}",
            results[1].1
        );
        assert!(matches!(results[0].1, Probe::Unsupported));
        assert!(matches!(results[3].1, Probe::Unsupported));
    }
}
