//! `dlcfuzz bench feedback`: the guided campaign and pure generation run side by side, and
//! the summary, the time series and the figure come out of a short run.

use std::process::Command;

#[test]
fn a_short_feedback_bench_compares_a_guided_campaign_with_pure_generation() {
    let out = std::env::temp_dir().join(format!("dlcfuzz-feedback-it-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let output = Command::new(env!("CARGO_BIN_EXE_dlcfuzz"))
        .args(["bench", "feedback", "--target", "ort_cpu", "--time", "6"])
        .args(["--seed", "1", "--out"])
        .arg(&out)
        .output()
        .expect("dlcfuzz runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let text = String::from_utf8_lossy(&output.stdout);
    let summary: serde_json::Value = serde_json::from_str(&text).expect("a JSON summary");
    for side in ["guided", "random"] {
        assert!(
            summary[format!("{side}_coverage")].as_u64() > Some(0),
            "{summary}"
        );
        assert!(
            summary[format!("{side}_tests")].as_u64() > Some(0),
            "{summary}"
        );
        assert!(summary[format!("{side}_bugs")].is_u64(), "{summary}");
    }
    let ratio = summary["coverage_ratio"].as_f64().expect("a ratio");
    let (g, r) = (
        summary["guided_coverage"].as_f64().unwrap(),
        summary["random_coverage"].as_f64().unwrap(),
    );
    assert!((ratio - g / r).abs() < 1e-9, "{summary}");
    let csv = std::fs::read_to_string(out.join("feedback.csv")).expect("the CSV");
    assert!(csv.lines().any(|l| l.starts_with("guided,")), "{csv}");
    assert!(csv.lines().any(|l| l.starts_with("random,")), "{csv}");
    assert!(std::fs::metadata(out.join("feedback.png")).is_ok_and(|m| m.len() > 1000));
    // Pure generation keeps no corpus; the guided side learns one.
    let entries =
        |side: &str| std::fs::read_dir(out.join(side).join("corpus")).map_or(0, |d| d.count());
    assert_eq!(entries("random"), 0);
    assert!(entries("guided") > 0);
    // A second run into the same folder is refused rather than mixed with the first.
    let again = Command::new(env!("CARGO_BIN_EXE_dlcfuzz"))
        .args([
            "bench", "feedback", "--target", "ort_cpu", "--time", "1", "--out",
        ])
        .arg(&out)
        .output()
        .expect("dlcfuzz runs");
    assert!(!again.status.success());
    assert!(String::from_utf8_lossy(&again.stderr).contains("fresh --out"));
    std::fs::remove_dir_all(&out).unwrap();
}
