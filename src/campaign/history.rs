//! State-dependent crashes. A worker can die on an input that passes alone in a fresh
//! worker: an earlier input of the same process broke it (a heap corrupted, a cache left
//! inconsistent). Its death keeps the tail of the inputs it ran before ([`HISTORY_DIR`],
//! oldest first, written with the crash). When the input alone does not replay, this module
//! replays that history in one fresh worker before the input; when the crash comes back,
//! ddmin cuts the history to the inputs it needs ([`NEEDED_JSON`]), and `dlcfuzz replay`
//! plays them before the input, so the finding replays from bytes again.

use super::executor::{Executor, Request};
use super::worker::{Isolated, Isolation};
use crate::oracle::Verdict;
use crate::reduce::reduction_key;
use crate::targets::TargetConfig;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The folder of a crash finding that holds its worker's earlier inputs, one file each
/// (`00000.bin`, … oldest first).
pub const HISTORY_DIR: &str = "history";
/// The file naming the earlier inputs a state-dependent crash needs, in order.
pub const NEEDED_JSON: &str = "history-needed.json";

/// Writes `history` into `dir`'s [`HISTORY_DIR`] (nothing when it is empty).
pub fn write(dir: &Path, history: &[Vec<u8>]) -> std::io::Result<()> {
    if history.is_empty() {
        return Ok(());
    }
    let folder = dir.join(HISTORY_DIR);
    std::fs::create_dir_all(&folder)?;
    for (i, input) in history.iter().enumerate() {
        std::fs::write(folder.join(file_name(i)), input)?;
    }
    Ok(())
}

fn file_name(i: usize) -> String {
    format!("{i:05}.bin")
}

/// The earlier inputs recorded in `dir`, oldest first, with their file names.
pub fn read(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let Ok(rd) = std::fs::read_dir(dir.join(HISTORY_DIR)) else {
        return Vec::new();
    };
    let mut inputs: Vec<(String, Vec<u8>)> = rd
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let bytes = std::fs::read(e.path()).ok()?;
            Some((name, bytes))
        })
        .collect();
    inputs.sort();
    inputs
}

/// What replaying a crash's history found: the earlier inputs it needs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Needed {
    /// The [`HISTORY_DIR`] files to run, in this order, in one fresh worker before the input.
    pub inputs: Vec<String>,
    /// How many earlier inputs the death recorded.
    pub recorded: usize,
    /// Fresh-worker replays the search ran.
    pub replays: usize,
    /// Whether the budget ran out before ddmin finished (the list may not be minimal).
    pub out_of_budget: bool,
    /// Wall-clock seconds spent.
    pub seconds: f64,
}

impl Needed {
    /// One line for a report; runs of consecutive files are written as ranges.
    pub fn describe(&self) -> String {
        format!(
            "the input alone passes in a fresh worker; it crashes after {} of the {} inputs its worker ran before it ({}: {}), replayed in one fresh worker{}",
            self.inputs.len(),
            self.recorded,
            HISTORY_DIR,
            ranges(&self.inputs),
            if self.out_of_budget {
                " (the search ran out of budget: perhaps not the fewest)"
            } else {
                ""
            }
        )
    }
}

/// `names` with each run of consecutively numbered files written `first–last`.
fn ranges(names: &[String]) -> String {
    let number = |n: &String| n.strip_suffix(".bin").and_then(|n| n.parse::<usize>().ok());
    let mut runs: Vec<(usize, usize)> = Vec::new();
    let mut parts = Vec::new();
    for name in names {
        match (number(name), runs.last_mut()) {
            (Some(k), Some(run)) if run.1 + 1 == k => run.1 = k,
            (Some(k), _) => runs.push((k, k)),
            (None, _) => parts.push(name.clone()),
        }
    }
    let mut written: Vec<String> = runs
        .iter()
        .map(|&(a, b)| {
            if a == b {
                file_name(a)
            } else {
                format!("{}–{}", file_name(a), file_name(b))
            }
        })
        .collect();
    written.append(&mut parts);
    written.join(", ")
}

/// The needed earlier inputs recorded in `dir`, if its crash was found state-dependent.
pub fn needed(dir: &Path) -> Option<Needed> {
    serde_json::from_slice(&std::fs::read(dir.join(NEEDED_JSON)).ok()?).ok()
}

/// The bytes of the earlier inputs `dir`'s crash needs, in order (empty when it needs none
/// or was never found state-dependent).
pub fn needed_inputs(dir: &Path) -> Result<Vec<Vec<u8>>, String> {
    let Some(needed) = needed(dir) else {
        return Ok(Vec::new());
    };
    needed
        .inputs
        .iter()
        .map(|name| {
            let path = dir.join(HISTORY_DIR).join(name);
            std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))
        })
        .collect()
}

/// What replaying a crash's history before its input gave.
#[derive(Debug)]
pub enum HistoryAnswer {
    /// The crash came back: these are the earlier inputs it needs.
    Needs(Needed),
    /// It did not come back after the `recorded` earlier inputs (none recorded: 0).
    NotBack {
        /// How many earlier inputs the death recorded.
        recorded: usize,
    },
}

/// How to replay a history.
pub struct HistoryReplay<'a> {
    /// The `dlcfuzz` executable the workers run.
    pub program: &'a Path,
    /// The finding's target.
    pub target: &'a TargetConfig,
    /// Limits on each test.
    pub isolation: Isolation,
    /// Where the workers keep their in-flight model.
    pub inflight: PathBuf,
    /// Time for the search after the first, whole-history replay (which always runs).
    pub budget: Duration,
}

impl HistoryReplay<'_> {
    /// Whether running `earlier` in one fresh worker, then `input`, gives a finding whose
    /// reduction key is `key` (an earlier input that kills the worker spoils the try).
    fn crashes_after(&self, earlier: &[&[u8]], input: &[u8], key: &str) -> Result<bool, String> {
        let mut worker =
            Isolated::start(self.program, self.target, self.isolation, &self.inflight)?;
        for bytes in earlier {
            let outcome = worker.execute(&request(bytes))?;
            if outcome.death.is_some() {
                return Ok(false);
            }
        }
        let outcome = worker.execute(&request(input))?;
        Ok(matches!(&outcome.verdict, Verdict::Found(f) if reduction_key(&f.signature) == key))
    }

    /// Replays `dir`'s recorded history before `input` (first the inputs an earlier search
    /// found it needs, if any); when the crash (reduction key `key`) comes back, cuts the
    /// history to the inputs it needs and writes [`NEEDED_JSON`].
    pub fn search(&self, dir: &Path, input: &[u8], key: &str) -> Result<HistoryAnswer, String> {
        let start = Instant::now();
        let history = read(dir);
        let not_back = HistoryAnswer::NotBack {
            recorded: history.len(),
        };
        if history.is_empty() {
            return Ok(not_back);
        }
        let crashes_after = |indices: &[usize]| {
            let earlier: Vec<&[u8]> = indices.iter().map(|&i| history[i].1.as_slice()).collect();
            self.crashes_after(&earlier, input, key)
        };
        let every: Vec<usize> = (0..history.len()).collect();
        // An earlier search's answer is where a longer one starts (`dlcfuzz reduce --budget`
        // after a campaign's short one), once it is seen to hold still.
        let earlier_answer: Option<Vec<usize>> = needed(dir).map(|n| {
            n.inputs
                .iter()
                .filter_map(|name| history.iter().position(|(h, _)| h == name))
                .collect()
        });
        let mut replays = 0;
        let mut start_from = None;
        for candidate in earlier_answer.into_iter().chain([every]) {
            replays += 1;
            if crashes_after(&candidate)? {
                start_from = Some(candidate);
                break;
            }
        }
        let Some(indices) = start_from else {
            let _ = std::fs::remove_dir_all(&self.inflight);
            return Ok(not_back);
        };
        let deadline = Instant::now() + self.budget;
        let mut out_of_budget = false;
        let kept = crate::reduce::ddmin::ddmin(&indices, |subset| {
            if Instant::now() >= deadline {
                out_of_budget = true;
                return false;
            }
            replays += 1;
            crashes_after(subset).unwrap_or(false)
        });
        let _ = std::fs::remove_dir_all(&self.inflight);
        let needed = Needed {
            inputs: kept.iter().map(|&i| history[i].0.clone()).collect(),
            recorded: history.len(),
            replays,
            out_of_budget,
            seconds: start.elapsed().as_secs_f64(),
        };
        std::fs::write(
            dir.join(NEEDED_JSON),
            serde_json::to_vec_pretty(&needed).expect("serializable"),
        )
        .map_err(|e| format!("{}: {e}", dir.display()))?;
        Ok(HistoryAnswer::Needs(needed))
    }
}

fn request(bytes: &[u8]) -> Request {
    Request {
        bytes: bytes.to_vec(),
        edits: Vec::new(),
        save_to: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_written_history_reads_back_oldest_first() {
        let dir = tempfile::tempdir().unwrap();
        let inputs: Vec<Vec<u8>> = (0..12u8).map(|i| vec![i; i as usize + 1]).collect();
        write(dir.path(), &inputs).unwrap();
        let back: Vec<Vec<u8>> = read(dir.path()).into_iter().map(|(_, b)| b).collect();
        assert_eq!(back, inputs);
        assert!(needed(dir.path()).is_none());
        assert!(needed_inputs(dir.path()).unwrap().is_empty());
    }

    #[test]
    fn the_needed_inputs_are_read_by_name_in_their_order() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), &[b"a".to_vec(), b"b".to_vec(), b"c".to_vec()]).unwrap();
        let needed = Needed {
            inputs: vec![file_name(2), file_name(0)],
            recorded: 3,
            replays: 4,
            out_of_budget: false,
            seconds: 0.5,
        };
        std::fs::write(
            dir.path().join(NEEDED_JSON),
            serde_json::to_vec(&needed).unwrap(),
        )
        .unwrap();
        assert_eq!(
            needed_inputs(dir.path()).unwrap(),
            vec![b"c".to_vec(), b"a".to_vec()]
        );
        assert!(needed.describe().contains("after 2 of the 3 inputs"));
    }

    #[test]
    fn consecutive_files_are_written_as_ranges() {
        let names: Vec<String> = [3, 4, 5, 9, 11, 12].iter().map(|&i| file_name(i)).collect();
        assert_eq!(
            ranges(&names),
            "00003.bin–00005.bin, 00009.bin, 00011.bin–00012.bin"
        );
    }

    #[test]
    fn an_empty_history_writes_no_folder() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), &[]).unwrap();
        assert!(!dir.path().join(HISTORY_DIR).exists());
    }
}
