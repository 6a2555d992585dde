use dlcfuzz::backend::capability::Capabilities;
use dlcfuzz::backend::ort::OrtCpu;
use dlcfuzz::gen::{Limits, TestCase, CONFIG_BYTES, STEP_BYTES};
use dlcfuzz::ir::NodeKind;
use dlcfuzz::values::search::{gradient_search, SearchConfig};
use petgraph::stable_graph::NodeIndex;
use rand::{Rng, SeedableRng};
use std::time::Duration;

fn chain(case: &TestCase, n: NodeIndex, depth: usize) -> String {
    let node = case.graph.node(n);
    let name = match &node.kind {
        NodeKind::Op(op) => op.op_type().to_string(),
        other => format!("{other:?}").chars().take(12).collect(),
    };
    if depth == 0 {
        return name;
    }
    let ins: Vec<String> = case
        .graph
        .inputs_of(n)
        .iter()
        .map(|v| chain(case, v.node, depth - 1))
        .collect();
    if ins.is_empty() {
        name
    } else {
        format!("{name}({})", ins.join(", "))
    }
}

fn main() {
    let nodes: usize = std::env::args().nth(1).unwrap().parse().unwrap();
    let backend = OrtCpu::new().unwrap();
    let menu = Capabilities::load_or_probe(&backend).menu();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
    let len = CONFIG_BYTES + STEP_BYTES * nodes * 2;
    let config = SearchConfig {
        budget: Duration::from_millis(20),
        max_steps: u32::MAX,
        seed: 7,
    };
    for _ in 0..300 {
        let mut b = vec![0u8; len];
        rng.fill(b.as_mut_slice());
        let mut case = TestCase::decode(&b, &menu, &Limits::exact(nodes));
        let out = gradient_search(&mut case, &config);
        if !out.valid {
            // find the failing node
            println!(
                "FAIL {:?} steps {} restarts {} err {:?}",
                out.failing_op, out.steps, out.restarts, out.error
            );
            for n in case.graph.op_nodes() {
                if let NodeKind::Op(op) = &case.graph.node(n).kind {
                    if Some(op.op_type().to_string()) == out.failing_op {
                        println!("   {}", chain(&case, n, 4));
                    }
                }
            }
        }
    }
}
