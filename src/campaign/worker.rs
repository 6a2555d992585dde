//! Isolation: tests run in a persistent child process (`dlcfuzz worker`), one request at a
//! time over its stdin and stdout. The parent enforces a per-test timeout and an RSS limit;
//! when the child segfaults, aborts, hangs or grows too large, the test becomes a crash,
//! hang or out-of-memory finding and the next request starts a fresh child.
//!
//! Protocol: the worker prints [`READY`] plus its unoptimized level's name once its harness
//! is built, then for each request line (JSON [`Request`]) one [`OUTCOME`]-prefixed JSON
//! [`Outcome`] line. Anything else a backend prints to stdout is ignored. Before running the
//! backend the worker writes the model to its in-flight folder, so a death keeps the model.

use super::executor::{run_request, Death, Executor, Outcome, Request};
use crate::targets::MODEL as INFLIGHT_MODEL;
use crate::targets::{FuzzTarget, TargetConfig};
use std::io::{BufRead, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// First line of a worker whose harness is ready, followed by a space and the name of the
/// backend's unoptimized level.
pub const READY: &str = "@dlcfuzz-ready";
/// Prefix of an outcome line.
pub const OUTCOME: &str = "@dlcfuzz-outcome ";

/// How much stderr is kept per test.
const STDERR_KEEP: usize = 64 << 10;
/// How often a running test's RSS is sampled.
const POLL: Duration = Duration::from_millis(20);

/// The worker side: serves requests from stdin until it closes. The worker dies with its
/// parent (`PR_SET_PDEATHSIG`), so a killed campaign leaves no orphans.
pub fn serve(target: &dyn FuzzTarget, inflight: &Path) -> std::io::Result<()> {
    // SAFETY: prctl with PR_SET_PDEATHSIG only sets a flag of this process.
    unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) };
    std::fs::create_dir_all(inflight)?;
    let ready = format!("{READY} {}\n", target.reference_level());
    write_line(&ready)?;
    for line in std::io::stdin().lock().lines() {
        let line = line?;
        let request: Request = serde_json::from_str(&line).map_err(std::io::Error::other)?;
        // The parent removed the previous in-flight model before sending this request.
        let outcome = run_request(target, &request, Some(inflight));
        let reply = serde_json::to_string(&outcome).map_err(std::io::Error::other)?;
        write_line(&format!("{OUTCOME}{reply}\n"))?;
    }
    Ok(())
}

fn write_line(line: &str) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(line.as_bytes())?;
    out.flush()
}

/// Limits on one isolated test.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Isolation {
    /// Wall-clock limit per test.
    pub timeout: Duration,
    /// Resident-set limit of the worker, in MiB.
    pub rss_limit_mb: u64,
}

impl Isolation {
    /// The worker's default resident-set limit, in MiB.
    pub const DEFAULT_RSS_MB: u64 = 2048;

    /// The target's own limits: its per-test time limit and the default memory limit.
    pub fn for_target(target: &crate::targets::TargetInfo) -> Isolation {
        Isolation {
            timeout: Duration::from_secs_f64(target.test_seconds),
            rss_limit_mb: Self::DEFAULT_RSS_MB,
        }
    }

    /// The limits a user asked for on tests of the target called `target`: `timeout`
    /// seconds (default: the target's own) and `rss_limit_mb`.
    pub fn asked(
        target: &str,
        timeout: Option<f64>,
        rss_limit_mb: u64,
    ) -> Result<Isolation, String> {
        let seconds = match timeout {
            Some(s) => s,
            None => crate::targets::by_name(target)?.test_seconds,
        };
        Ok(Isolation {
            timeout: Duration::from_secs_f64(seconds),
            rss_limit_mb,
        })
    }
}

/// The fuzz inputs a worker ran and survived, oldest first: the last [`History::KEEP`] of
/// them, [`History::KEEP_BYTES`] at most. A worker that dies hands them to its death, so a
/// crash that needs earlier inputs in the same process (a heap corrupted by one, a cache
/// filled by another) can be replayed ([`crate::campaign::history`]).
#[derive(Debug, Default)]
pub struct History {
    inputs: std::collections::VecDeque<Vec<u8>>,
    bytes: usize,
}

impl History {
    /// At most this many inputs are kept.
    pub const KEEP: usize = 2048;
    /// At most this many bytes of inputs are kept.
    pub const KEEP_BYTES: usize = 16 << 20;

    /// Notes that the worker ran `input` and survived.
    pub fn push(&mut self, input: &[u8]) {
        self.inputs.push_back(input.to_vec());
        self.bytes += input.len();
        while self.inputs.len() > Self::KEEP || self.bytes > Self::KEEP_BYTES {
            let Some(old) = self.inputs.pop_front() else {
                break;
            };
            self.bytes -= old.len();
        }
    }

    /// The inputs kept, oldest first; the history is empty afterwards.
    pub fn take(&mut self) -> Vec<Vec<u8>> {
        self.bytes = 0;
        std::mem::take(&mut self.inputs).into()
    }
}

struct Running {
    process: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
    stderr: Arc<Mutex<Vec<u8>>>,
}

/// The parent side: an [`Executor`] that runs each request in a worker process.
pub struct Isolated {
    program: PathBuf,
    target: TargetConfig,
    isolation: Isolation,
    inflight: PathBuf,
    running: Option<Running>,
    history: History,
    reference_level: String,
    /// Highest worker RSS seen, in KiB.
    pub peak_rss_kb: u64,
    /// Workers started after the first (one per death).
    pub restarts: u64,
}

/// Resident set size of process `pid` in KiB (0 when it cannot be read).
pub fn rss_kb(pid: u32) -> u64 {
    let statm = std::fs::read_to_string(format!("/proc/{pid}/statm")).unwrap_or_default();
    let pages: u64 = statm
        .split_whitespace()
        .nth(1)
        .and_then(|p| p.parse().ok())
        .unwrap_or(0);
    // SAFETY: sysconf has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(1) as u64;
    pages * page / 1024
}

/// A signal number's name (`SIGSEGV`), or `signal N`.
fn signal_name(signal: i32) -> String {
    match signal {
        libc::SIGSEGV => "SIGSEGV".into(),
        libc::SIGABRT => "SIGABRT".into(),
        libc::SIGBUS => "SIGBUS".into(),
        libc::SIGFPE => "SIGFPE".into(),
        libc::SIGILL => "SIGILL".into(),
        libc::SIGKILL => "SIGKILL".into(),
        libc::SIGTRAP => "SIGTRAP".into(),
        s => format!("signal {s}"),
    }
}

impl Isolated {
    /// Starts a worker running `program worker …` for `target`; its in-flight model goes to
    /// `inflight`. Fails when the worker cannot start (the backend is missing, for example).
    pub fn start(
        program: &Path,
        target: &TargetConfig,
        isolation: Isolation,
        inflight: &Path,
    ) -> Result<Isolated, String> {
        let mut me = Isolated {
            program: program.to_path_buf(),
            target: target.clone(),
            isolation,
            inflight: inflight.to_path_buf(),
            running: None,
            history: History::default(),
            reference_level: String::new(),
            peak_rss_kb: 0,
            restarts: 0,
        };
        me.spawn()?;
        Ok(me)
    }

    fn spawn(&mut self) -> Result<(), String> {
        let mut cmd = Command::new(&self.program);
        cmd.arg("worker")
            .args(["--target", &self.target.name])
            .args(["--max-nodes", &self.target.max_nodes.to_string()])
            .arg("--inflight")
            .arg(&self.inflight)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if let Some(p) = &self.target.patterns {
            cmd.args(["--patterns", p]);
        }
        let mut process = cmd
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", self.program.display()))?;
        let stdin = process.stdin.take().expect("piped");
        let stdout = process.stdout.take().expect("piped");
        let mut stderr_pipe = process.stderr.take().expect("piped");
        let (tx, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let stderr = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&stderr);
        // When the worker last showed it is alive: started, or printed a set-up status line.
        let alive = Arc::new(Mutex::new(Instant::now()));
        let heard = Arc::clone(&alive);
        std::thread::spawn(move || {
            let mut chunk = [0u8; 8192];
            let mut line: Vec<u8> = Vec::new();
            while let Ok(n) = stderr_pipe.read(&mut chunk) {
                if n == 0 {
                    break;
                }
                // Set-up status lines (a long compiler probe) go on to the user.
                for &b in &chunk[..n] {
                    if b != b'\n' {
                        if line.len() < 4096 {
                            line.push(b);
                        }
                        continue;
                    }
                    if line.starts_with(crate::targets::STATUS_PREFIX.as_bytes()) {
                        eprintln!("{}", String::from_utf8_lossy(&line));
                        *heard.lock().unwrap_or_else(|e| e.into_inner()) = Instant::now();
                    }
                    line.clear();
                }
                let mut buf = sink.lock().unwrap_or_else(|e| e.into_inner());
                buf.extend_from_slice(&chunk[..n]);
                if buf.len() > 2 * STDERR_KEEP {
                    let cut = buf.len() - STDERR_KEEP;
                    buf.drain(..cut);
                }
            }
        });
        // Building the harness can take a while (a first capability probe), so the ready
        // line gets a generous wait of its own, counted from the last status line the set-up
        // printed: a long probe that reports its progress is never cut off.
        let quiet_limit = Duration::from_secs(600);
        let still_starting =
            || alive.lock().unwrap_or_else(|e| e.into_inner()).elapsed() < quiet_limit;
        let reference_level = loop {
            match lines.recv_timeout(POLL) {
                Ok(line) => {
                    if let Some(level) = line.strip_prefix(READY) {
                        break level.trim().to_string();
                    }
                }
                Err(RecvTimeoutError::Timeout) if still_starting() => {}
                Err(_) => {
                    let _ = process.kill();
                    let _ = process.wait();
                    let err =
                        String::from_utf8_lossy(&stderr.lock().unwrap_or_else(|e| e.into_inner()))
                            .into_owned();
                    // The worker's own error line, not the backtrace printed after it.
                    let message = err
                        .lines()
                        .find_map(|l| l.strip_prefix("Error: "))
                        .or_else(|| err.lines().last())
                        .unwrap_or("no message");
                    return Err(format!(
                        "the worker did not start ({}): {message}",
                        self.target.name,
                    ));
                }
            }
        };
        self.reference_level = reference_level;
        self.history = History::default();
        self.running = Some(Running {
            process,
            stdin,
            lines,
            stderr,
        });
        Ok(())
    }

    /// Kills the worker (if any) and waits for it: the cause of death.
    fn bury(&mut self, killed_for: Option<&str>) -> Death {
        let Some(mut r) = self.running.take() else {
            return Death::default();
        };
        if killed_for.is_some() {
            let _ = r.process.kill();
        }
        let status = r.process.wait().ok();
        // Give the stderr reader a moment to drain what the process wrote last.
        std::thread::sleep(Duration::from_millis(30));
        let stderr = String::from_utf8_lossy(&r.stderr.lock().unwrap_or_else(|e| e.into_inner()))
            .into_owned();
        let cause = match (killed_for, status) {
            (Some(why), _) => why.to_string(),
            (None, Some(s)) => {
                use std::os::unix::process::ExitStatusExt;
                match (s.signal(), s.code()) {
                    (Some(sig), _) => signal_name(sig),
                    (None, Some(code)) => format!("exit {code}"),
                    _ => "unknown".into(),
                }
            }
            (None, None) => "unknown".into(),
        };
        Death {
            cause,
            stderr,
            model: std::fs::read(self.inflight.join(INFLIGHT_MODEL)).ok(),
            history: self.history.take(),
        }
    }

    fn died(&mut self, killed_for: Option<&str>) -> Outcome {
        let death = self.bury(killed_for);
        self.restarts += 1;
        Outcome::of_death(death)
    }

    fn try_execute(&mut self, request: &Request) -> Result<Outcome, String> {
        if self.running.is_none() {
            self.spawn()?;
        }
        let line = serde_json::to_string(request).map_err(|e| e.to_string())? + "\n";
        let r = self.running.as_mut().expect("spawned above");
        r.stderr.lock().unwrap_or_else(|e| e.into_inner()).clear();
        let _ = std::fs::remove_file(self.inflight.join(INFLIGHT_MODEL));
        if r.stdin
            .write_all(line.as_bytes())
            .and_then(|_| r.stdin.flush())
            .is_err()
        {
            return Ok(self.died(None));
        }
        let start = Instant::now();
        let limit_kb = self.isolation.rss_limit_mb * 1024;
        loop {
            let r = self.running.as_mut().expect("running");
            match r.lines.recv_timeout(POLL) {
                Ok(line) => {
                    if let Some(at) = line.find(OUTCOME) {
                        let outcome: Outcome = serde_json::from_str(&line[at + OUTCOME.len()..])
                            .map_err(|e| format!("bad worker reply: {e}"))?;
                        self.peak_rss_kb = self.peak_rss_kb.max(rss_kb(r.process.id()));
                        if request.edits.is_empty() {
                            self.history.push(&request.bytes);
                        }
                        return Ok(outcome);
                    }
                }
                Err(RecvTimeoutError::Timeout) => {
                    let rss = rss_kb(r.process.id());
                    self.peak_rss_kb = self.peak_rss_kb.max(rss);
                    if rss > limit_kb {
                        return Ok(self.died(Some("rss-limit")));
                    }
                    if start.elapsed() > self.isolation.timeout {
                        return Ok(self.died(Some("timeout")));
                    }
                }
                Err(RecvTimeoutError::Disconnected) => return Ok(self.died(None)),
            }
        }
    }
}

impl Executor for Isolated {
    fn execute(&mut self, request: &Request) -> Result<Outcome, String> {
        self.try_execute(request)
    }

    fn reference_level(&self) -> &str {
        &self.reference_level
    }

    fn peak_rss_kb(&self) -> u64 {
        self.peak_rss_kb
    }

    fn restarts(&self) -> u64 {
        self.restarts
    }
}

impl Drop for Isolated {
    fn drop(&mut self) {
        if let Some(mut r) = self.running.take() {
            let _ = r.process.kill();
            let _ = r.process.wait();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::History;

    #[test]
    fn the_history_keeps_the_newest_inputs_within_its_bounds() {
        let mut history = History::default();
        for i in 0..History::KEEP + 5 {
            history.push(&(i as u32).to_le_bytes());
        }
        let kept = history.take();
        assert_eq!(kept.len(), History::KEEP);
        assert_eq!(kept[0], 5u32.to_le_bytes());
        assert!(history.take().is_empty());
        let big = vec![0u8; History::KEEP_BYTES / 2 + 1];
        history.push(&big);
        history.push(&big);
        history.push(b"last");
        let kept = history.take();
        assert_eq!(kept.len(), 2, "one big input and the last one fit");
        assert_eq!(kept[1], b"last");
    }
}
