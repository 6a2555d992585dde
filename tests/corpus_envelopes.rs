//! Corpus discipline: every checked-in seed of a differential target has an envelope entry
//! (`corpus/envelopes/<target>.json`) recording the decoder version and what the seed decodes
//! to (op types in node order, model input shapes). A decoder change that alters any seed's
//! test case fails here until `gen::DECODER_VERSION` is bumped and the envelopes are
//! re-blessed (`DLCFUZZ_BLESS=1 cargo test --release --test corpus_envelopes`).

use dlcfuzz::emit::emit_with_applied;
use dlcfuzz::gen::DECODER_VERSION;
use dlcfuzz::targets::{FuzzTarget, Input, TargetConfig, TARGETS};
use std::collections::BTreeMap;
use std::path::Path;

#[derive(serde::Serialize, serde::Deserialize, PartialEq, Debug)]
struct Envelope {
    decoder_version: u32,
    seeds: BTreeMap<String, String>,
}

fn summary(target: &dyn FuzzTarget, bytes: &[u8]) -> String {
    let Some(case) = target.decode(bytes) else {
        // A program target: the rows it instantiates and a hash of the program's source.
        let (_, files) = target.files(bytes, &[]);
        let file = |n: &str| {
            files
                .iter()
                .find(|(name, _)| name == n)
                .map(|(_, c)| String::from_utf8_lossy(c).into_owned())
                .unwrap_or_default()
        };
        let hash = dlcfuzz::gen::menu::op_key(&file("program.py"), 0);
        return format!("{} | {hash:016x}", file("ops.txt").replace('\n', ","));
    };
    let (model, applied) = emit_with_applied(&case);
    let ops = case.op_sequence();
    let inputs: Vec<String> = model
        .inputs
        .iter()
        .map(|(n, _)| format!("{:?}", case.graph.node(*n).outputs[0]))
        .collect();
    let summary = format!("{} | {}", ops.join(","), inputs.join(";"));
    if applied.is_empty() {
        summary
    } else {
        format!("{summary} | {}", applied.join(","))
    }
}

fn check(target: &str, built: &dyn FuzzTarget) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut seeds: Vec<_> = std::fs::read_dir(root.join("corpus").join(target))
        .expect("seed folder")
        .map(|e| e.expect("entry").path())
        .collect();
    seeds.sort();
    let current = Envelope {
        decoder_version: DECODER_VERSION,
        seeds: seeds
            .iter()
            .map(|p| {
                let name = p.file_name().unwrap().to_string_lossy().into_owned();
                (name, summary(built, &std::fs::read(p).expect("seed")))
            })
            .collect(),
    };
    let path = root.join("corpus/envelopes").join(format!("{target}.json"));
    if std::env::var("DLCFUZZ_BLESS").as_deref() == Ok("1") {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(
            &path,
            serde_json::to_string_pretty(&current).unwrap() + "\n",
        )
        .unwrap();
        return;
    }
    let saved: Envelope = serde_json::from_slice(
        &std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display())),
    )
    .expect("envelope JSON");
    assert_eq!(
        saved.decoder_version, DECODER_VERSION,
        "{target}: the envelopes were blessed for another decoder version"
    );
    for (name, was) in &saved.seeds {
        let now = current.seeds.get(name);
        assert_eq!(
            now,
            Some(was),
            "{target}/{name} decodes differently: bump gen::DECODER_VERSION and re-bless"
        );
    }
    assert_eq!(
        saved.seeds.len(),
        current.seeds.len(),
        "{target}: unblessed seeds"
    );
}

#[test]
fn graph_seeds_decode_as_recorded() {
    // Every graph target with checked-in seeds, from the registry; GPU targets share their
    // CPU twin's decoder and seeds.
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut checked = Vec::new();
    for info in TARGETS {
        let graph = matches!(info.input, Input::Graph { .. });
        if !graph || !root.join("corpus").join(info.name).is_dir() {
            continue;
        }
        let built = info
            .build(&TargetConfig::new(info.name, 10))
            .unwrap_or_else(|e| panic!("{e} (run scripts/setup.sh --python-compilers)"));
        check(info.name, built.as_ref());
        checked.push(info.name);
    }
    assert!(checked.len() >= 6, "{checked:?}");
}
