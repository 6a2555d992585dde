//! Reports: `report.md` per finding ([`finding`]) and the campaign summary (`dlcfuzz report
//! DIR`): final figures, distinct bugs after dedup with their counts, reduction ratios, and
//! PNG plots of findings, coverage and transformers fired over time, and the optimizations
//! fired by kind ([`fired`]).

pub mod fired;
pub mod plot;

use crate::campaign::bugs::{merged_into, provisional_key};
use crate::campaign::dedup::{cluster, Cluster, Member};
use crate::campaign::finding::read_reduction;
use crate::campaign::finding::{no_replay, read_count, upstream_of_folder, Report};
use crate::campaign::known::Upstream;
use crate::campaign::runner::{finding_dirs, STATS_CSV};
use plot::{line_chart, Series};
use std::fmt::Write;
use std::path::Path;

/// The rows of a campaign's `stats.csv`, each by column name (fields that do not parse are
/// left out).
pub(crate) fn csv_rows(out: &Path) -> Result<Vec<std::collections::HashMap<String, f64>>, String> {
    let path = out.join(STATS_CSV);
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap_or("").split(',').collect();
    Ok(lines
        .map(|l| {
            header
                .iter()
                .zip(l.split(','))
                .filter_map(|(h, v)| v.parse().ok().map(|v| (h.to_string(), v)))
                .collect()
        })
        .collect())
}

/// The findings of a campaign folder as the clustering sees them.
pub fn members(out: &Path) -> Vec<Member> {
    finding_dirs(out)
        .into_iter()
        .filter_map(|dir| {
            let report = Report::read(&dir).ok()?;
            let reduced = read_reduction(&dir);
            let upstream = upstream_of_folder(&dir, &report);
            Some(Member {
                folder: dir.file_name()?.to_string_lossy().into_owned(),
                count: read_count(&dir),
                culprits: match &report.culprits {
                    Some(Ok(c)) => c.culprits.clone(),
                    _ => Vec::new(),
                },
                reduced_ops: reduced.map(|_| report.op_types.clone()),
                key: report
                    .bug_key
                    .clone()
                    .unwrap_or_else(|| provisional_key(&report.finding)),
                reduced: report.bug_key.is_some(),
                merged_into: merged_into(&dir),
                replays: no_replay(&dir).is_none(),
                upstream,
                finding: report.finding,
            })
        })
        .collect()
}

/// Distinct signatures before dedup, clusters after, and the mean reduction ratio over the
/// reduced findings (with how many were reduced).
pub struct Summary {
    /// Distinct signatures (finding folders).
    pub signatures: usize,
    /// The clusters.
    pub clusters: Vec<Cluster>,
    /// Mean reduced/original operator nodes over reduced findings.
    pub mean_reduction_ratio: Option<f64>,
    /// Findings with a reduction.
    pub reduced: usize,
}

/// Writes the campaign report of `out` (see [`campaign`]) and returns where, with the
/// summary counts, as JSON (`dlcfuzz report`).
pub fn campaign_json(out: &Path) -> Result<serde_json::Value, String> {
    let path = campaign(out)?;
    let summary = summarize(out);
    Ok(serde_json::json!({
        "report": path,
        "distinct_signatures": summary.signatures,
        "distinct_after_dedup": summary.clusters.len(),
        "known_upstream": summary.upstream(),
        "on_file": summary.on_file(),
        "new": summary.new_bugs(),
        "does_not_replay": summary.not_replaying(),
        "unreduced_bugs": summary.unreduced(),
        "reduced": summary.reduced,
        "mean_reduction_ratio": summary.mean_reduction_ratio,
    }))
}

impl Summary {
    /// Bugs the known-upstream table holds (reported upstream, or on file here).
    pub fn known(&self) -> usize {
        self.count(Upstream::is_known)
    }

    /// Bugs reported upstream already.
    pub fn upstream(&self) -> usize {
        self.count(Upstream::is_upstream)
    }

    /// Bugs on file in `docs/findings/` but not reported upstream.
    pub fn on_file(&self) -> usize {
        self.known() - self.upstream()
    }

    /// Bugs no row of the table holds and whose input reproduces them.
    pub fn new_bugs(&self) -> usize {
        self.clusters.len() - self.known() - self.not_replaying()
    }

    /// Bugs no row of the table holds whose inputs did not reproduce them in a fresh worker
    /// (state-dependent or flaky: nothing to file as they stand).
    pub fn not_replaying(&self) -> usize {
        let unknown = |c: &&Cluster| !c.upstream.as_ref().is_some_and(Upstream::is_known);
        self.clusters
            .iter()
            .filter(unknown)
            .filter(|c| !c.replays)
            .count()
    }

    /// Bugs with a member not reduced yet.
    pub fn unreduced(&self) -> usize {
        self.clusters.iter().filter(|c| !c.reduced).count()
    }

    fn count(&self, which: fn(&Upstream) -> bool) -> usize {
        self.clusters
            .iter()
            .filter(|c| c.upstream.as_ref().is_some_and(which))
            .count()
    }
}

/// Computes the [`Summary`] of campaign folder `out`.
pub fn summarize(out: &Path) -> Summary {
    let members = members(out);
    let ratios: Vec<f64> = finding_dirs(out)
        .iter()
        .filter_map(|d| read_reduction(d))
        .map(|r| r.ratio())
        .collect();
    Summary {
        signatures: members.len(),
        clusters: cluster(&members),
        mean_reduction_ratio: (!ratios.is_empty())
            .then(|| ratios.iter().sum::<f64>() / ratios.len() as f64),
        reduced: ratios.len(),
    }
}

fn series<'a>(
    rows: &[std::collections::HashMap<String, f64>],
    label: &'a str,
    column: &str,
) -> Series<'a> {
    Series {
        label,
        points: rows
            .iter()
            .filter_map(|r| Some((*r.get("seconds")?, *r.get(column)?)))
            .collect(),
    }
}

/// Writes `out/report.md` and its plots (`findings.png`, `coverage.png`,
/// `transformers.png`); returns the markdown path.
pub fn campaign(out: &Path) -> Result<std::path::PathBuf, String> {
    let rows = csv_rows(out)?;
    let last = rows.last().cloned().unwrap_or_default();
    let get = |k: &str| last.get(k).copied().unwrap_or(0.0);
    let summary = summarize(out);
    // Refresh every finding's report.md: hit counts have grown since it was written.
    for dir in finding_dirs(out)
        .into_iter()
        .filter(|d| merged_into(d).is_none())
    {
        if let Err(e) = crate::campaign::report_md::write(&dir) {
            tracing::warn!("{}: {e}", dir.display());
        }
    }
    line_chart(
        &out.join("findings.png"),
        "Findings over time",
        "count",
        &[
            series(&rows, "distinct signatures", "findings"),
            series(&rows, "tests with a finding", "finding_tests"),
        ],
    )?;
    line_chart(
        &out.join("coverage.png"),
        "Coverage features over time",
        "features (transformers fired + op types)",
        &[series(&rows, "features", "features")],
    )?;
    line_chart(
        &out.join("transformers.png"),
        "Distinct optimizer transformers fired",
        "transformers",
        &[series(&rows, "transformers fired", "transformers_fired")],
    )?;
    let mut md = String::new();
    let _ = writeln!(md, "# Campaign report: {}\n", out.display());
    let _ = writeln!(
        md,
        "- {} tests in {:.0} s ({:.1} tests/s); valid {:.1} %, unsupported {:.1} %",
        get("tests"),
        get("seconds"),
        get("tests_per_s"),
        get("valid_fraction") * 100.0,
        get("unsupported_fraction") * 100.0
    );
    let _ = writeln!(
        md,
        "- {} coverage features, {} transformers fired; peak test-process RSS {:.0} MiB; {} test-process restarts",
        get("features"),
        get("transformers_fired"),
        get("peak_test_rss_mb"),
        get("restarts")
    );
    let _ = writeln!(
        md,
        "- Findings: **{} distinct signatures → {} distinct bugs after dedup** ({} known upstream, {} on file here, {} new, {} not reproduced by their input in a fresh worker; {} not reduced yet), {} tests hit one",
        summary.signatures,
        summary.clusters.len(),
        summary.upstream(),
        summary.on_file(),
        summary.new_bugs(),
        summary.not_replaying(),
        summary.unreduced(),
        get("finding_tests")
    );
    match summary.mean_reduction_ratio {
        Some(r) => {
            let _ = writeln!(
                md,
                "- Reduction: {} of {} findings reduced, mean size ratio {:.2} (reduced / original operator nodes)",
                summary.reduced, summary.signatures, r
            );
        }
        None => {
            let _ = writeln!(
                md,
                "- Reduction: none reduced yet (`dlcfuzz reduce FINDING`)"
            );
        }
    }
    let _ = writeln!(md, "\n![findings](findings.png)\n![coverage](coverage.png)\n![transformers](transformers.png)\n");
    let _ = writeln!(md, "## Distinct bugs\n");
    let _ = writeln!(
        md,
        "One row per bug: the bug folder first, the signatures merged into it below.\n"
    );
    let _ = writeln!(
        md,
        "| # | kind | hits | upstream | culprits | bug folder | signatures |"
    );
    let _ = writeln!(md, "|---|---|---|---|---|---|---|");
    for (i, c) in summary.clusters.iter().enumerate() {
        let upstream = match &c.upstream {
            Some(u) if !c.replays && !u.is_known() => {
                "does not replay: its input passed in a fresh worker".to_string()
            }
            Some(u) => u.describe(),
            None => "?".to_string(),
        };
        let bug = &c.folders[0];
        let _ = writeln!(
            md,
            "| {} | {}{} | {} | {} | {} | [{bug}](findings/{bug}/report.md) | {} |",
            i + 1,
            c.kind,
            if c.reduced { "" } else { " (not reduced)" },
            c.count,
            upstream.replace('|', "/"),
            c.culprits.join(", "),
            c.signatures
                .iter()
                .map(|s| format!("`{}`", s.replace('|', "/").replace('`', "'")))
                .collect::<Vec<_>>()
                .join("<br>")
        );
    }
    let _ = writeln!(md, "\n{}", fired::section(&fired::tests_by_name(out)));
    let path = out.join("report.md");
    std::fs::write(&path, md).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::campaign::known::{Relation, State};

    fn bug(upstream: Upstream, replays: bool) -> Cluster {
        Cluster {
            signature: "crash:SIGSEGV:ops=ReduceL2".into(),
            kind: "Crash".into(),
            count: 1,
            folders: vec!["finding-1".into()],
            signatures: vec!["crash:SIGSEGV:ops=ReduceL2".into()],
            culprits: Vec::new(),
            reduced: false,
            upstream: Some(upstream),
            replays,
        }
    }

    #[test]
    fn bugs_whose_input_does_not_replay_are_counted_apart_from_new_ones() {
        let known = Upstream::Known {
            id: "row".into(),
            url: Some("https://example.org/1".into()),
            finding: None,
            state: State::Open,
            relation: Relation::Same,
        };
        let summary = Summary {
            signatures: 4,
            clusters: vec![
                bug(Upstream::New, true),
                bug(Upstream::New, false),
                bug(known.clone(), false),
                bug(known, true),
            ],
            mean_reduction_ratio: None,
            reduced: 0,
        };
        assert_eq!(summary.new_bugs(), 1);
        assert_eq!(summary.not_replaying(), 1);
        assert_eq!(
            summary.upstream(),
            2,
            "a known bug stays known, replayed or not"
        );
    }
}
