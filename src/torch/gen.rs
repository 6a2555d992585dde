//! Bytes → torch program: parameters of drawn types and shapes, then one statement per
//! drawn operator row ([`super::ops`]), each reading earlier values that fit it (a value of
//! the wrong element type or rank is first cast or reshaped by an adapter statement), until
//! the size limit or the bytes run out. Every value's type is known without running it.
//! Outputs are the values no statement reads.

use super::builder::Builder;
use super::family;
use super::ops::{table, TorchOp};
use crate::gen::menu::op_key;
use crate::ir::ScalarType;
use crate::mutate::program::{Program, Stmt, Var, VarType};
use arbitrary::Unstructured;
use std::collections::{BTreeMap, BTreeSet};

/// Parameter types drawn for the program's inputs (float32 most often).
const INPUT_TYPES: [ScalarType; 12] = [
    ScalarType::F32,
    ScalarType::F32,
    ScalarType::F32,
    ScalarType::F32,
    ScalarType::F16,
    ScalarType::BF16,
    ScalarType::F64,
    ScalarType::I64,
    ScalarType::I32,
    ScalarType::U8,
    ScalarType::I8,
    ScalarType::Bool,
];

/// A generated torch program and its provenance.
#[derive(Clone, Debug)]
pub struct TorchProgram {
    /// The program; `profile` holds the parameters' values (in their carrier types).
    pub program: Program,
    /// Rows instantiated, in order.
    pub ops: Vec<&'static str>,
    /// The row that defined each operator result (adapters are absent).
    pub producers: BTreeMap<Var, &'static str>,
    /// The packed component each parameter and value belongs to.
    pub component_of: BTreeMap<Var, usize>,
    /// The parameters that are rows' weights ([`Builder::weights`]).
    pub weights: BTreeSet<Var>,
}

/// What a compiler lacks, as probed: rows it has no conversion for (never instantiated) and,
/// per row, the only element types it handles (a row absent here is not restricted).
#[derive(Clone, Debug, Default)]
pub struct Lacks {
    /// Rows never instantiated.
    pub rows: BTreeSet<&'static str>,
    /// Per row, the element types its data arguments may have.
    pub types: BTreeMap<&'static str, BTreeSet<ScalarType>>,
}

/// The row a drawn `u16` picks, by consistent hashing over the rows' names (as the graph
/// generator's menu does): adding a row moves no other row's draws.
fn ring() -> &'static [(u16, usize)] {
    static RING: std::sync::OnceLock<Vec<(u16, usize)>> = std::sync::OnceLock::new();
    RING.get_or_init(|| {
        let mut ring: Vec<(u16, usize)> = table()
            .iter()
            .enumerate()
            .flat_map(|(i, op)| {
                (1..=crate::gen::menu::RING_POINTS)
                    .map(move |k| ((op_key(op.name, k) >> 48) as u16, i))
            })
            .collect();
        ring.sort_unstable();
        ring
    })
}

fn pick_row(draw: u16) -> &'static TorchOp {
    let ring = ring();
    let at = ring.partition_point(|(point, _)| *point < draw);
    &table()[ring[at % ring.len()].1]
}

/// Draws one parameter's type: 0-d to 4-d, dims 1 to 5.
fn input_type(u: &mut Unstructured) -> VarType {
    let scalar = INPUT_TYPES[u.choose_index(INPUT_TYPES.len()).unwrap_or(0)];
    let rank = [1, 2, 2, 3, 3, 4, 0][u.choose_index(7).unwrap_or(1)];
    let shape = (0..rank)
        .map(|_| u.int_in_range(1..=5).unwrap_or(2))
        .collect();
    VarType::new(scalar, shape)
}

/// Decodes `bytes` into a program of at most `max_ops` operator rows (adapters not
/// counted). Never fails: the bytes running out ends generation.
pub fn generate(bytes: &[u8], max_ops: usize) -> TorchProgram {
    generate_packed(bytes, max_ops, 1)
}

/// Decodes `bytes` into `components` independent programs of at most `max_ops` rows each,
/// packed into one: each component draws its own parameters and reads only its own values,
/// so one compilation tests them all and an output belongs to exactly one component.
pub fn generate_packed(bytes: &[u8], max_ops: usize, components: usize) -> TorchProgram {
    generate_without(bytes, max_ops, components, &Lacks::default())
}

/// [`generate_packed`] never instantiating the rows `lacks` names (a drawn excluded row uses
/// up its attempt, so the other draws stay where they were) nor a row on element types
/// `lacks` says the compiler does not handle for it: for a compiler that lacks them, as
/// probed.
pub fn generate_without(
    bytes: &[u8],
    max_ops: usize,
    components: usize,
    lacks: &Lacks,
) -> TorchProgram {
    let choose = |draw| Some(pick_row(draw)).filter(|row| !lacks.rows.contains(row.name));
    generate_with(bytes, max_ops, components, &choose, &lacks.types)
}

/// A program of up to `max_ops` instances of `row` alone (and the adapters it needs): what
/// a probe of one row's support compiles.
pub fn generate_only(bytes: &[u8], max_ops: usize, row: &'static TorchOp) -> TorchProgram {
    generate_with(bytes, max_ops, 1, &|_| Some(row), &BTreeMap::new())
}

/// The generator: each operator draw's `u16` becomes a row by `choose` (`None`: the draw is
/// spent on nothing).
fn generate_with(
    bytes: &[u8],
    max_ops: usize,
    components: usize,
    choose: &dyn Fn(u16) -> Option<&'static TorchOp>,
    handled: &BTreeMap<&'static str, BTreeSet<ScalarType>>,
) -> TorchProgram {
    let mut u = Unstructured::new(bytes);
    let seed = u.arbitrary::<u64>().unwrap_or(0);
    let mut b = Builder::new(&mut u, seed);
    let mut ops = Vec::new();
    let mut producers = BTreeMap::new();
    let mut component_of = BTreeMap::new();
    for component in 0..components.max(1) {
        if component > 0 && b.u.is_empty() {
            break;
        }
        b.start_component();
        let inputs = b.u.int_in_range(1..=3).unwrap_or(1);
        for _ in 0..inputs {
            let ty = input_type(b.u);
            b.input(ty);
        }
        let (mut made, mut attempts) = (0, 0);
        while made < max_ops && attempts < 4 * max_ops && !b.u.is_empty() {
            attempts += 1;
            let Some(row) = choose(b.u.arbitrary::<u16>().unwrap_or(0)) else {
                continue;
            };
            let mark = b.mark();
            b.handle_only(handled.get(row.name));
            let built = family::build(row, &mut b);
            b.handle_only(None);
            if let Some(var) = built {
                producers.insert(var, row.name);
                ops.push(row.name);
                made += 1;
            } else {
                b.roll_back(mark);
            }
        }
        for v in b.program.params.iter().chain(b.pool()) {
            component_of.entry(v.clone()).or_insert(component);
        }
        for s in &b.program.body {
            for v in s.defs() {
                component_of.entry(v).or_insert(component);
            }
        }
    }
    let read: BTreeSet<Var> = b.program.body.iter().flat_map(Stmt::reads).collect();
    let mut outputs: Vec<Var> = b
        .program
        .body
        .iter()
        .flat_map(Stmt::defs)
        .filter(|v| !read.contains(v))
        .collect();
    if outputs.is_empty() {
        outputs = b.program.params.iter().take(1).cloned().collect();
    }
    b.program.outputs = outputs;
    TorchProgram {
        program: b.program,
        ops,
        producers,
        component_of,
        weights: b.weights,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes(seed: u64, len: usize) -> Vec<u8> {
        use rand::{RngCore, SeedableRng};
        use rand_chacha::ChaCha8Rng;
        let mut v = vec![0u8; len];
        ChaCha8Rng::seed_from_u64(seed).fill_bytes(&mut v);
        v
    }

    #[test]
    fn generation_is_deterministic_and_typed() {
        for seed in 0..200 {
            let input = bytes(seed, 400);
            let a = generate(&input, 8);
            let b = generate(&input, 8);
            assert_eq!(a.program, b.program, "seed {seed}");
            for stmt in &a.program.body {
                for v in stmt.defs().into_iter().chain(stmt.reads()) {
                    assert!(a.program.types.contains_key(&v), "seed {seed}: {v} untyped");
                }
            }
            for p in &a.program.params {
                let ty = &a.program.types[p];
                assert_eq!(a.program.profile[p].shape, ty.shape, "seed {seed}");
            }
        }
    }

    #[test]
    fn weights_are_parameters_that_only_their_row_reads() {
        let mut held = 0;
        for seed in 0..200 {
            let p = generate_packed(&bytes(seed, 900), 8, 3);
            for w in &p.weights {
                assert!(
                    p.program.params.contains(w),
                    "seed {seed}: {w} not a parameter"
                );
                let readers = p.program.body.iter().filter(|s| s.reads().contains(w));
                assert_eq!(readers.count(), 1, "seed {seed}: {w} read as data");
            }
            let is_conv = |o: &&&str| {
                let row = crate::torch::ops::by_name(o).expect("a row");
                matches!(row.family, crate::torch::ops::Family::Conv { .. })
            };
            let convs = p.ops.iter().filter(is_conv).count();
            assert!(p.weights.len() >= 2 * convs, "seed {seed}: {:?}", p.ops);
            held += p.weights.len();
        }
        assert!(held > 100, "only {held} weights in 200 programs");
    }

    #[test]
    fn packed_components_read_only_their_own_values() {
        for seed in 0..100 {
            let packed = generate_packed(&bytes(seed, 900), 6, 3);
            let of = &packed.component_of;
            for stmt in &packed.program.body {
                let defs = stmt.defs();
                for r in stmt.reads() {
                    assert_eq!(of[&r], of[&defs[0]], "seed {seed}: {stmt:?}");
                }
            }
        }
    }

    /// The element types of the arguments the rows' own statements read.
    fn row_argument_types(p: &TorchProgram) -> BTreeSet<ScalarType> {
        p.program
            .body
            .iter()
            .filter_map(|stmt| match stmt {
                Stmt::Let { var, call } if p.producers.contains_key(var) => Some(call),
                _ => None,
            })
            .flat_map(|call| call.args.iter().map(|a| p.program.types[a].scalar))
            .collect()
    }

    #[test]
    fn rows_read_only_the_element_types_the_compiler_handles() {
        let handled: BTreeSet<ScalarType> = [ScalarType::F32, ScalarType::I64, ScalarType::Bool]
            .into_iter()
            .collect();
        let lacks = Lacks {
            rows: BTreeSet::new(),
            types: table()
                .iter()
                .map(|op| (op.name, handled.clone()))
                .collect(),
        };
        let (mut free, mut held) = (BTreeSet::new(), BTreeSet::new());
        let mut made = 0;
        for seed in 0..300 {
            let input = bytes(seed, 600);
            free.extend(row_argument_types(&generate_packed(&input, 8, 1)));
            let restricted = generate_without(&input, 8, 1, &lacks);
            made += restricted.ops.len();
            held.extend(row_argument_types(&restricted));
        }
        assert!(free.contains(&ScalarType::F64) && free.contains(&ScalarType::F16));
        assert!(held.is_subset(&handled), "{held:?}");
        assert!(made > 1000, "only {made} rows made");
    }

    #[test]
    fn most_rows_are_reached() {
        let mut seen = BTreeSet::new();
        for seed in 0..3000 {
            seen.extend(generate(&bytes(seed, 600), 10).ops);
        }
        let missing: Vec<&str> = table()
            .iter()
            .map(|o| o.name)
            .filter(|n| !seen.contains(n))
            .collect();
        assert!(
            missing.len() * 20 <= table().len(),
            "never instantiated: {missing:?}"
        );
    }
}
