//! Python-hosted compilers (torch.compile, TVM Relax) through a persistent worker process:
//! `python3` running the embedded `host.py`, spoken to over pipes in [`frame`]s.
//!
//! Why a worker process and not CPython embedded with pyo3: a native crash in Inductor's
//! generated C++, in LLVM or in a TVM pass must be a classified finding, not the end of the
//! fuzzer; the full `torch` wheel would otherwise load a second libtorch next to the one
//! `tch` links; TVM bundles its own LLVM; and a hang needs a process to kill. A compile takes
//! 50 ms (TVM) to seconds (Inductor), so a pipe round trip (tens of µs) costs nothing.
//!
//! [`PythonHost::call`] sends one request and waits for its response within a timeout. A
//! host that dies (signal or exit) or hangs is reported as a [`HostFailure`] with the tail of
//! its stderr (where `faulthandler` prints the Python stack of a native crash) and is started
//! afresh on the next call. A host configured with a [`coverage::Scope`] returns with every
//! response the compilers' Python lines its request ran, and keeps their ids until
//! [`PythonHost::take_coverage`]. Likewise the names of the optimizations a request fired
//! (torch.compile: Inductor's counters, its pattern matches and its lowerings and
//! fallbacks), kept until [`PythonHost::take_fired`].

pub mod classify;
pub mod coverage;
pub mod frame;

use crate::ir::Tensor;
use classify::PyError;
use frame::Frame;
use serde_json::{json, Value};
use std::collections::{BTreeSet, VecDeque};
use std::io::Read;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The host program.
const HOST_SOURCE: &str = include_str!("host.py");
/// Bytes of the host's stderr kept for failure reports.
const STDERR_TAIL: usize = 16 * 1024;

/// How the host died or why it could not serve a request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HostFailure {
    /// The process ended: by a signal (a native crash: segfault, abort) or an exit status.
    Died {
        /// The signal that ended it.
        signal: Option<i32>,
        /// Its exit status, when it exited.
        code: Option<i32>,
        /// The tail of its stderr.
        stderr: String,
    },
    /// No response within the timeout; the host was killed.
    Hung {
        /// The timeout.
        after: Duration,
        /// The tail of its stderr.
        stderr: String,
    },
    /// The host could not be started (no interpreter, say).
    Spawn(String),
}

impl std::fmt::Display for HostFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HostFailure::Died {
                signal: Some(s), ..
            } => write!(f, "the Python host died of signal {s}"),
            HostFailure::Died { code, .. } => {
                write!(f, "the Python host exited (status {code:?})")
            }
            HostFailure::Hung { after, .. } => {
                write!(f, "the Python host did not answer within {after:?}")
            }
            HostFailure::Spawn(e) => write!(f, "cannot start the Python host: {e}"),
        }
    }
}

impl HostFailure {
    /// Where it happened: the innermost Python frame of the `faulthandler` dump in the
    /// stderr tail, or `no Python frame`.
    pub fn site(&self) -> String {
        let stderr = match self {
            HostFailure::Died { stderr, .. } | HostFailure::Hung { stderr, .. } => stderr,
            HostFailure::Spawn(_) => return "no Python frame".into(),
        };
        crash_site(stderr).unwrap_or_else(|| "no Python frame".into())
    }
}

/// One named run of a response.
#[derive(Clone, Debug)]
pub enum Run {
    /// Its outputs.
    Outputs(Vec<Tensor>),
    /// The stage that failed.
    Failed(PyError),
}

/// The runs of a response, in order.
pub fn runs(response: &Frame) -> Result<Vec<(String, Run)>, String> {
    let Some(list) = response.header["runs"].as_array() else {
        return Err("response without runs".into());
    };
    list.iter()
        .map(|r| {
            let name = r["name"].as_str().unwrap_or("?").to_string();
            if let Some(outputs) = r["outputs"].as_array() {
                let tensors = outputs
                    .iter()
                    .map(|spec| response.read_tensor(spec))
                    .collect::<Result<Vec<_>, _>>()?;
                Ok((name, Run::Outputs(tensors)))
            } else {
                let error = serde_json::from_value(r["error"].clone())
                    .map_err(|e| format!("run {name}: {e}"))?;
                Ok((name, Run::Failed(error)))
            }
        })
        .collect()
}

/// The names in a response's `fired` list (none when it has none).
fn fired_names(response: &Frame) -> impl Iterator<Item = String> + '_ {
    response.header["fired"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|name| name.as_str().map(str::to_string))
}

/// The innermost Python frame of a `faulthandler` dump (`File "...", line N in f`), with
/// the path cut to its package.
fn crash_site(stderr: &str) -> Option<String> {
    let line = stderr
        .lines()
        .find(|l| l.trim_start().starts_with("File \""))?;
    let line = line.trim();
    let path = line.split('"').nth(1)?;
    let function = line.rsplit(" in ").next()?;
    let short = ["/torch/", "/tvm/", "/tvm_ffi/"]
        .iter()
        .find_map(|root| {
            path.split_once(root)
                .map(|(_, rest)| format!("{}{rest}", &root[1..]))
        })
        .unwrap_or_else(|| path.rsplit('/').next().unwrap_or(path).to_string());
    Some(format!("{short} in {function}"))
}

/// The per-request timeout: `DLCFUZZ_HOST_TIMEOUT_S`, else 300 s (a cold Inductor compile
/// takes half a minute here).
pub fn request_timeout() -> Duration {
    let seconds = std::env::var("DLCFUZZ_HOST_TIMEOUT_S")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(300);
    Duration::from_secs(seconds)
}

/// Where the host's packages come from and how long a request may take.
#[derive(Clone, Debug)]
pub struct HostConfig {
    /// The interpreter and what it needs set ([`crate::paths::python_interpreter`]).
    pub python: crate::paths::Interpreter,
    /// Its `PYTHONPATH`: the project-local environment with torch and TVM.
    pub pythonpath: PathBuf,
    /// Longest time one request may take.
    pub timeout: Duration,
    /// Extra environment variables.
    pub env: Vec<(String, String)>,
    /// Whose Python line coverage the host measures and every request returns (`None`:
    /// no probes).
    pub coverage: Option<coverage::Scope>,
}

impl HostConfig {
    /// The project-local environment ([`crate::paths::python_env`]) with a timeout.
    pub fn local(timeout: Duration) -> HostConfig {
        HostConfig {
            python: crate::paths::python_interpreter(),
            pythonpath: crate::paths::python_env(),
            timeout,
            env: vec![
                ("TORCHINDUCTOR_COMPILE_THREADS".into(), compile_threads()),
                ("OMP_NUM_THREADS".into(), "1".into()),
                ("PYTHONUNBUFFERED".into(), "1".into()),
            ],
            coverage: None,
        }
        .with_search_path()
    }

    /// With a `PATH` when this process has none (as under `env -i`): g++, which Inductor
    /// starts by name, then looks for its own `cc1plus` relative to the working directory
    /// and fails.
    fn with_search_path(mut self) -> HostConfig {
        if std::env::var_os("PATH").is_none() {
            self.env
                .push(("PATH".into(), "/usr/local/bin:/usr/bin:/bin".into()));
        }
        self
    }

    /// This configuration measuring the line coverage of `scope` and returning it with
    /// every request, unless `DLCFUZZ_PY_COVERAGE=0` ([`coverage::Mode`]).
    pub fn covering(self, scope: coverage::Scope) -> HostConfig {
        HostConfig {
            coverage: coverage::Mode::current().collects().then_some(scope),
            ..self
        }
    }
}

/// Lets `jobs` Python hosts started from now on share the cores: each gets
/// `cores / jobs` Inductor compile workers (at least one), unless
/// `TORCHINDUCTOR_COMPILE_THREADS` is set already.
pub fn share_cores(jobs: usize) {
    if std::env::var_os("TORCHINDUCTOR_COMPILE_THREADS").is_none() {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let threads = (cores / jobs.max(1)).max(1);
        std::env::set_var("TORCHINDUCTOR_COMPILE_THREADS", threads.to_string());
    }
}

/// Inductor's parallel C++ compile workers per host: `TORCHINDUCTOR_COMPILE_THREADS` when
/// set (a campaign sets it to the cores per job), else every core (one test at a time). g++
/// on each generated kernel is most of a torch.compile test's time, and a graph has several.
pub fn compile_threads() -> String {
    std::env::var("TORCHINDUCTOR_COMPILE_THREADS").unwrap_or_else(|_| {
        std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .to_string()
    })
}

struct Running {
    child: Child,
    stdin: ChildStdin,
    responses: Receiver<std::io::Result<Option<Frame>>>,
    stderr: Arc<Mutex<VecDeque<u8>>>,
}

/// A persistent Python worker, restarted after it dies.
pub struct PythonHost {
    config: HostConfig,
    running: Option<Running>,
    /// Line ids the responses since the last [`PythonHost::take_coverage`] carried (a set:
    /// a host nobody takes from stays as small as the compilers' code).
    covered: BTreeSet<u32>,
    /// Names of the optimizations the responses since the last [`PythonHost::take_fired`]
    /// said fired (a response's `fired` list: Inductor's counters, patterns and lowerings).
    fired: BTreeSet<String>,
}

impl PythonHost {
    /// A host started on first use.
    pub fn new(config: HostConfig) -> PythonHost {
        PythonHost {
            config,
            running: None,
            covered: BTreeSet::new(),
            fired: BTreeSet::new(),
        }
    }

    fn spawn(&self) -> Result<Running, HostFailure> {
        let mut cmd = Command::new(&self.config.python.program);
        cmd.envs(self.config.python.env.iter().map(|(k, v)| (k, v)))
            .arg("-c")
            .arg("import sys; exec(compile(sys.argv[1], 'dlcfuzz_host.py', 'exec'))")
            .arg(HOST_SOURCE)
            .env("PYTHONPATH", &self.config.pythonpath)
            .envs(self.config.env.iter().map(|(k, v)| (k, v)))
            .envs(
                self.config
                    .coverage
                    .map(coverage::host_env)
                    .unwrap_or_default(),
            )
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        // SAFETY: prctl(PR_SET_PDEATHSIG) only sets a flag of the child: the host dies with
        // its parent, so a killed fuzzer leaves no orphan compiling in the background.
        unsafe {
            cmd.pre_exec(|| {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                Ok(())
            });
        }
        let mut child = cmd.spawn().map_err(|e| {
            HostFailure::Spawn(format!("{}: {e}", self.config.python.program.display()))
        })?;
        let stdin = child.stdin.take().expect("piped stdin");
        let mut stdout = child.stdout.take().expect("piped stdout");
        let mut stderr_pipe = child.stderr.take().expect("piped stderr");
        let (tx, responses) = mpsc::channel();
        std::thread::spawn(move || loop {
            let frame = Frame::read_from(&mut stdout);
            let end = !matches!(frame, Ok(Some(_)));
            if tx.send(frame).is_err() || end {
                return;
            }
        });
        let stderr = Arc::new(Mutex::new(VecDeque::with_capacity(STDERR_TAIL)));
        let sink = Arc::clone(&stderr);
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = stderr_pipe.read(&mut buf) {
                if n == 0 {
                    return;
                }
                if std::env::var_os("DLCFUZZ_HOST_STDERR").is_some() {
                    eprint!("{}", String::from_utf8_lossy(&buf[..n]));
                }
                let mut tail = sink.lock().unwrap_or_else(|p| p.into_inner());
                tail.extend(&buf[..n]);
                let excess = tail.len().saturating_sub(STDERR_TAIL);
                tail.drain(..excess);
            }
        });
        Ok(Running {
            child,
            stdin,
            responses,
            stderr,
        })
    }

    /// Sends `request` and returns the response frame, keeping the ids of the lines it
    /// covered (a host with a coverage scope measures every request). A dead or hung host is reaped (killed when
    /// hung) and reported; the next call starts a new one.
    pub fn call(&mut self, request: &Frame) -> Result<Frame, HostFailure> {
        if self.running.is_none() {
            self.running = Some(self.spawn()?);
        }
        let running = self.running.as_mut().expect("just started");
        running
            .stderr
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clear();
        let sent = request.write_to(&mut running.stdin);
        let answer = match sent {
            Ok(()) => running.responses.recv_timeout(self.config.timeout),
            Err(_) => Err(RecvTimeoutError::Disconnected),
        };
        match answer {
            Ok(Ok(Some(frame))) => {
                match coverage::ids(&frame) {
                    Ok(ids) => self.covered.extend(ids),
                    Err(e) => tracing::warn!("the Python host's coverage is malformed: {e}"),
                }
                self.fired.extend(fired_names(&frame));
                Ok(frame)
            }
            Err(RecvTimeoutError::Timeout) => {
                let mut dead = self.running.take().expect("running");
                let _ = dead.child.kill();
                let _ = dead.child.wait();
                Err(HostFailure::Hung {
                    after: self.config.timeout,
                    stderr: tail(&dead.stderr),
                })
            }
            _ => {
                let mut dead = self.running.take().expect("running");
                let status = dead.child.wait();
                // Let the stderr reader drain what the dying process wrote.
                std::thread::sleep(Duration::from_millis(50));
                let (signal, code) = match status {
                    Ok(s) => (s.signal(), s.code()),
                    Err(_) => (None, None),
                };
                Err(HostFailure::Died {
                    signal,
                    code,
                    stderr: tail(&dead.stderr),
                })
            }
        }
    }

    /// The sorted, distinct ids ([`coverage::line_id`]) of the Python lines the responses
    /// since the previous call covered; empty without a coverage scope.
    pub fn take_coverage(&mut self) -> Vec<u32> {
        std::mem::take(&mut self.covered).into_iter().collect()
    }

    /// The names of the optimizations the responses since the previous call said fired,
    /// sorted and distinct.
    pub fn take_fired(&mut self) -> Vec<String> {
        std::mem::take(&mut self.fired).into_iter().collect()
    }

    /// The versions of Python and of `modules` in the host's environment, or why a module
    /// does not import (a message naming the module and the environment).
    pub fn versions(&mut self, modules: &[&str]) -> Result<Value, String> {
        let response = self
            .call(&Frame::new(json!({"op": "hello", "modules": modules})))
            .map_err(|e| e.to_string())?;
        let versions = response.header["versions"].clone();
        for m in modules {
            if versions[m].is_null() {
                return Err(format!(
                    "the Python host cannot import {m} from {} ({}): run `scripts/setup.sh --python-compilers`, which installs torch==2.15.0 and apache-tvm==0.27.0.post1 there",
                    self.config.pythonpath.display(),
                    versions[format!("{m}_error")].as_str().unwrap_or("unknown error"),
                ));
            }
        }
        Ok(versions)
    }

    /// The C++ compiler Inductor builds its CPU kernels with (g++, or `$CXX`), or why the
    /// host finds none.
    pub fn inductor_cxx(&mut self) -> Result<String, String> {
        let response = self
            .call(&Frame::new(
                json!({"op": "hello", "modules": [], "inductor_cxx": true}),
            ))
            .map_err(|e| e.to_string())?;
        let versions = &response.header["versions"];
        versions["inductor_cxx"]
            .as_str()
            .map(str::to_string)
            .ok_or_else(|| {
                versions["inductor_cxx_error"]
                    .as_str()
                    .unwrap_or("unknown error")
                    .to_string()
            })
    }
}

impl Drop for PythonHost {
    fn drop(&mut self) {
        if let Some(mut r) = self.running.take() {
            let _ = r.child.kill();
            let _ = r.child.wait();
        }
    }
}

fn tail(buffer: &Mutex<VecDeque<u8>>) -> String {
    let bytes: Vec<u8> = buffer
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .iter()
        .copied()
        .collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crash_site_reads_the_innermost_frame() {
        let dump = "Fatal Python error: Segmentation fault\n\nCurrent thread 0x7f (most recent call first):\n  File \"/x/site/torch/_inductor/codecache.py\", line 12 in load\n  File \"dlcfuzz_host.py\", line 3 in serve\n";
        assert_eq!(
            crash_site(dump).as_deref(),
            Some("torch/_inductor/codecache.py in load")
        );
        assert_eq!(crash_site("nothing"), None);
    }
}
