//! Decoding from bytes: total, valid, deterministic and local.

mod common;

use dlcfuzz::emit::emit;
use dlcfuzz::gen::{Limits, Menu, TestCase, CONFIG_BYTES, STEP_BYTES};
use dlcfuzz::ir::NodeKind;
use dlcfuzz::ops::registry;
use std::collections::BTreeMap;

fn op_types(case: &TestCase) -> BTreeMap<&'static str, i64> {
    let mut m = BTreeMap::new();
    for n in case.graph.op_nodes() {
        if let NodeKind::Op(op) = &case.graph.node(n).kind {
            *m.entry(op.op_type()).or_insert(0) += 1;
        }
    }
    m
}

#[test]
fn every_byte_string_decodes_to_a_valid_connected_graph() {
    let menu = Menu::everything();
    for bytes in common::random_inputs(1, 2000, 1200) {
        let case = std::panic::catch_unwind(|| TestCase::decode(&bytes, &menu, &Limits::default()))
            .unwrap_or_else(|_| panic!("decoding panicked on {bytes:?}"));
        let g = &case.graph;
        assert!(g.op_count() >= 1);
        assert!(g.is_connected());
        assert!(!g.outputs().is_empty());
        assert!(!case.inputs().is_empty());
        for n in g.op_nodes() {
            let NodeKind::Op(op) = &g.node(n).kind else {
                unreachable!()
            };
            let ins = g.inputs_of(n);
            assert_eq!(
                ins.len(),
                op.sig.inputs.len(),
                "{}",
                registry()[op.spec].name()
            );
            for (v, d) in ins.iter().zip(&op.sig.inputs) {
                assert_eq!(g.ty(*v).dtype, *d);
            }
            assert!(g.node(n).outputs.iter().all(|t| t.numel() >= 1));
        }
        for leaf in g
            .leaves(&NodeKind::Input)
            .into_iter()
            .chain(g.leaves(&NodeKind::Weight))
        {
            assert_eq!(case.values[&leaf].ty(), g.node(leaf).outputs[0]);
        }
    }
}

#[test]
fn decoding_is_deterministic_whatever_came_before() {
    let menu = Menu::everything();
    let inputs = common::random_inputs(2, 150, 1000);
    let first: Vec<Vec<u8>> = inputs
        .iter()
        .map(|b| emit(&TestCase::decode(b, &menu, &Limits::default())).bytes)
        .collect();
    // A different order gives the shared solver a different history.
    for (b, expected) in inputs.iter().zip(&first).rev() {
        assert_eq!(
            &emit(&TestCase::decode(b, &menu, &Limits::default())).bytes,
            expected
        );
    }
}

#[test]
fn a_one_byte_change_in_a_step_changes_little() {
    let menu = Menu::everything();
    let limits = Limits::exact(10);
    let mut changed = 0i64;
    let mut total = 0i64;
    let len = CONFIG_BYTES + STEP_BYTES * 20;
    for (k, mut bytes) in common::random_inputs(3, 200, 2).into_iter().enumerate() {
        bytes.resize(len, 0);
        for (i, b) in bytes.iter_mut().enumerate() {
            *b = (i as u64 * 2654435761 + k as u64 * 40503) as u8;
        }
        let before = op_types(&TestCase::decode(&bytes, &menu, &limits));
        let pos = CONFIG_BYTES + (k * 131) % (len - CONFIG_BYTES);
        bytes[pos] ^= 0x5a;
        let after = op_types(&TestCase::decode(&bytes, &menu, &limits));
        let keys: std::collections::BTreeSet<_> = before.keys().chain(after.keys()).collect();
        changed += keys
            .iter()
            .map(|k| (before.get(*k).unwrap_or(&0) - after.get(*k).unwrap_or(&0)).abs())
            .sum::<i64>();
        total += before.values().sum::<i64>();
    }
    let ratio = changed as f64 / total as f64;
    eprintln!("op-type multiset change per node after one flipped byte: {ratio:.3}");
    assert!(
        ratio < 0.25,
        "one flipped byte changed {ratio:.3} of the op types"
    );
}
