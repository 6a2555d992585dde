//! Line coverage of the Python-hosted compilers' own Python code (Dynamo, AOT Autograd,
//! Inductor; TVM Relax's frontend, passes and build pipeline), as coverage features.
//!
//! A host configured with a [`Scope`] loads the scope's modules with line probes (`host.py`,
//! `_LineProbes`: each module compiled from its source with one list store before every
//! statement; the instrumented code is cached under [`crate::paths::cache_dir`]) and
//! returns with every response the lines its request ran. The response names the files
//! (paths from the prefix on, such as `torch/_inductor/lowering.py`) and their line counts in
//! its header and carries the line numbers as one blob of `u32` LE. Each (file, line)
//! becomes a stable 32-bit [`line_id`], the same in every process and campaign; the hosted
//! targets return a test's ids in [`crate::targets::TargetRun::coverage`], libFuzzer sees
//! them as extra counters ([`crate::feedback::observe_lines`]) and `dlcfuzz fuzz` as corpus
//! features.
//!
//! Why probes and not a trace function: any `sys.settrace` hook, coverage.py's C tracer
//! included, switches CPython 3.11 into its tracing mode, which runs all Python code
//! unspecialized: measured, +57 % on the Python side of an Inductor compile with nothing
//! traced, +63 % tracing the scope. The probes cost only the scope's own statements, about
//! +5 % there.
//!
//! `DLCFUZZ_PY_COVERAGE` chooses the [`Mode`]: unset or `1` measures and feeds, `track`
//! measures and counts (campaign stats) without feeding libFuzzer or the corpus (the
//! "without feedback" side of a measurement), `0` measures nothing (no probes at all).

use super::frame::Frame;

/// The torch targets' scope: Dynamo, AOT Autograd (functorch) and Inductor.
pub const TORCH: Scope = &["torch/_dynamo/", "torch/_functorch/", "torch/_inductor/"];
/// The TVM targets' scope: Relax's Python packages (the ONNX frontend, the Python passes
/// and legalizations, the build pipeline).
pub const TVM: Scope = &["tvm/relax/"];

/// Path prefixes of the Python files whose lines count, relative to the directory on
/// `sys.path` that holds the package (`torch/_inductor/`).
pub type Scope = &'static [&'static str];

/// What happens to Python line coverage (`DLCFUZZ_PY_COVERAGE`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// `0`: no probes in the host.
    Off,
    /// `track`: measured and counted, but no libFuzzer counter and no corpus admission.
    Track,
    /// Unset or anything else: measured, counted and fed back.
    Feed,
}

impl Mode {
    /// The mode `DLCFUZZ_PY_COVERAGE` selects.
    pub fn current() -> Mode {
        match std::env::var("DLCFUZZ_PY_COVERAGE").as_deref() {
            Ok("0") => Mode::Off,
            Ok("track") => Mode::Track,
            _ => Mode::Feed,
        }
    }

    /// Whether hosts measure coverage.
    pub fn collects(self) -> bool {
        self != Mode::Off
    }

    /// Whether new lines steer the fuzzer (libFuzzer's counters, the campaign's corpus).
    pub fn feeds(self) -> bool {
        self == Mode::Feed
    }
}

/// The host's environment for measuring `scope`: the path prefixes, comma-separated, and
/// where the instrumented code is cached.
pub fn host_env(scope: Scope) -> Vec<(String, String)> {
    let cache = crate::paths::cache_dir().join("python-lines");
    vec![
        ("DLCFUZZ_PY_COVERAGE_SCOPE".into(), scope.join(",")),
        (
            "DLCFUZZ_PY_COVERAGE_CACHE".into(),
            cache.to_string_lossy().into_owned(),
        ),
    ]
}

/// The stable id of line `line` of `path` (a scope-relative path such as
/// `torch/_inductor/lowering.py`): the low 32 bits of [`crate::gen::menu::op_key`], the
/// project's FNV-1a + SplitMix64 name hash, of the path salted by the line.
pub fn line_id(path: &str, line: u32) -> u32 {
    crate::gen::menu::op_key(path, u64::from(line)) as u32
}

/// The covered lines a response carries, file by file (none when it carries no coverage).
pub fn files(response: &Frame) -> Result<Vec<(String, Vec<u32>)>, String> {
    let coverage = &response.header["coverage"];
    if coverage.is_null() {
        return Ok(Vec::new());
    }
    let names: Vec<String> = serde_json::from_value(coverage["files"].clone())
        .map_err(|e| format!("coverage files: {e}"))?;
    let counts: Vec<usize> = serde_json::from_value(coverage["lines"].clone())
        .map_err(|e| format!("coverage line counts: {e}"))?;
    let blob = coverage["blob"]
        .as_u64()
        .and_then(|b| response.blobs.get(b as usize))
        .ok_or("coverage blob index out of range")?;
    if names.len() != counts.len() || blob.len() != 4 * counts.iter().sum::<usize>() {
        return Err(format!(
            "coverage of {} files with {} counts does not match its {}-byte blob",
            names.len(),
            counts.len(),
            blob.len()
        ));
    }
    let mut lines = blob
        .chunks_exact(4)
        .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
    Ok(names
        .into_iter()
        .zip(counts)
        .map(|(name, n)| (name, lines.by_ref().take(n).collect()))
        .collect())
}

/// The sorted, distinct [`line_id`]s of the lines a response carries.
pub fn ids(response: &Frame) -> Result<Vec<u32>, String> {
    let mut ids: Vec<u32> = files(response)?
        .iter()
        .flat_map(|(path, lines)| lines.iter().map(|l| line_id(path, *l)))
        .collect();
    ids.sort_unstable();
    ids.dedup();
    Ok(ids)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A response carrying `covered` as `host.py` sends it.
    fn response(covered: &[(&str, &[u32])]) -> Frame {
        let mut frame = Frame::new(json!({"ok": true}));
        let blob: Vec<u8> = covered
            .iter()
            .flat_map(|(_, lines)| lines.iter().flat_map(|l| l.to_le_bytes()))
            .collect();
        let index = frame.blob(blob);
        frame.header["coverage"] = json!({
            "files": covered.iter().map(|(f, _)| f).collect::<Vec<_>>(),
            "lines": covered.iter().map(|(_, l)| l.len()).collect::<Vec<_>>(),
            "blob": index,
        });
        frame
    }

    #[test]
    fn line_ids_are_stable_and_tell_files_and_lines_apart() {
        // Pinned: ids are compared across processes, campaigns and saved states.
        assert_eq!(line_id("torch/_inductor/lowering.py", 100), 0x510c_a5b2);
        let ids = [
            line_id("torch/_inductor/lowering.py", 100),
            line_id("torch/_inductor/lowering.py", 101),
            line_id("torch/_inductor/graph.py", 100),
            line_id("torch/_dynamo/output_graph.py", 100),
        ];
        let distinct: std::collections::BTreeSet<u32> = ids.into_iter().collect();
        assert_eq!(distinct.len(), ids.len());
    }

    #[test]
    fn responses_give_their_files_lines_and_sorted_distinct_ids() {
        let frame = response(&[
            ("torch/_inductor/graph.py", &[12, 40, 41]),
            ("torch/_dynamo/eval_frame.py", &[7]),
        ]);
        let files = files(&frame).expect("well-formed coverage");
        assert_eq!(
            files[0],
            (String::from("torch/_inductor/graph.py"), vec![12, 40, 41])
        );
        assert_eq!(
            files[1],
            (String::from("torch/_dynamo/eval_frame.py"), vec![7])
        );
        let ids = ids(&frame).expect("well-formed coverage");
        assert_eq!(ids.len(), 4);
        assert!(ids.windows(2).all(|w| w[0] < w[1]));
        assert!(ids.contains(&line_id("torch/_dynamo/eval_frame.py", 7)));
        // No coverage asked for, none returned.
        assert_eq!(super::ids(&Frame::new(json!({"ok": true}))), Ok(Vec::new()));
    }

    #[test]
    fn a_blob_that_does_not_match_its_counts_is_an_error() {
        let mut frame = response(&[("tvm/relax/frontend/onnx/onnx_frontend.py", &[1, 2])]);
        frame.blobs[0].pop();
        assert!(files(&frame).unwrap_err().contains("does not match"));
        frame.header["coverage"]["blob"] = json!(5);
        assert!(files(&frame).unwrap_err().contains("out of range"));
    }
}
