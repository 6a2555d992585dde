//! The state of one torch program's generation ([`Builder`]): the bytes, the program so far,
//! the values statements may read, and the helpers every row family instantiates with
//! (parameters, typed statements, adapter casts and reshapes, drawn integers).

use super::ops::Accept;
use crate::gen::sample::sample_tensor;
use crate::ir::{ScalarType, Tensor, TensorType};
use crate::mutate::program::{Call, Program, Stmt, Var, VarType};
use crate::ops::ValueDomain;
use arbitrary::Unstructured;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use std::collections::BTreeSet;

/// Largest element count of any value.
pub const MAX_NUMEL: usize = 2048;
/// How a new parameter's values are drawn.
#[derive(Clone, Copy, Debug)]
pub enum Values {
    /// The default safe range of the type.
    Any,
    /// Strictly positive (variances).
    Positive,
    /// Integers in `[0, bound)` (indices).
    Below(usize),
    /// Per slice along `dim`, distinct integers in `[0, bound)` (scatter indices).
    DistinctBelow {
        /// The axis along which indices must not repeat.
        dim: usize,
        /// Their bound.
        bound: usize,
    },
}

/// The state of one generation.
pub struct Builder<'a, 'b> {
    /// The bytes.
    pub u: &'a mut Unstructured<'b>,
    /// The program so far.
    pub program: Program,
    rng: ChaCha8Rng,
    /// Values statements may read, oldest first.
    pool: Vec<Var>,
    /// The element types the row being instantiated may read (`None`: every type).
    handled: Option<&'a BTreeSet<ScalarType>>,
    /// The parameters that are a row's weights (convolution and matrix weights, biases,
    /// normalization parameters and statistics), not data: a model's trained state.
    pub weights: BTreeSet<Var>,
}

impl<'a> Builder<'a, '_> {
    /// Whether the row being instantiated may read element type `s` (what the compiler
    /// handles for it, as probed): a predicate every family's choice of arguments applies.
    pub fn handles(&self) -> impl Fn(ScalarType) -> bool + 'a {
        let handled = self.handled;
        move |s| handled.is_none_or(|h| h.contains(&s))
    }

    /// The type of `var`.
    pub fn ty(&self, var: &Var) -> VarType {
        self.program.types[var].clone()
    }

    /// A new parameter of type `ty` with values drawn as `values`.
    pub fn param(&mut self, ty: VarType, values: Values) -> Var {
        let var = self.program.mint("p");
        let carrier = TensorType::new(ty.scalar.carrier(), ty.shape.clone());
        let tensor = match values {
            Values::Any => sample_tensor(&carrier, ValueDomain::Any, &mut self.rng),
            Values::Positive => sample_tensor(&carrier, ValueDomain::Positive, &mut self.rng),
            Values::Below(bound) => indices(&carrier, None, bound, &mut self.rng),
            Values::DistinctBelow { dim, bound } => {
                indices(&carrier, Some(dim), bound, &mut self.rng)
            }
        };
        self.program.params.push(var.clone());
        self.program.profile.insert(var.clone(), tensor);
        self.program.types.insert(var.clone(), ty);
        var
    }

    /// A new parameter that is a row's weight ([`Builder::weights`]).
    pub fn weight(&mut self, ty: VarType, values: Values) -> Var {
        let var = self.param(ty, values);
        self.weights.insert(var.clone());
        var
    }

    /// Appends `var = template(args)` of type `out`; `elementwise` and `fresh` as in
    /// [`Call`]. `None` when the result would be empty or too large.
    pub fn emit(
        &mut self,
        template: String,
        args: Vec<Var>,
        out: VarType,
        elementwise: bool,
        fresh: bool,
    ) -> Option<Var> {
        if out.numel() == 0 || out.numel() > MAX_NUMEL {
            return None;
        }
        let var = self.program.mint("v");
        self.program.types.insert(var.clone(), out);
        self.program.body.push(Stmt::Let {
            var: var.clone(),
            call: Call {
                template,
                args,
                elementwise,
                fresh,
            },
        });
        self.pool.push(var.clone());
        Some(var)
    }

    /// A value whose type `accept`s and whose rank is in `ranks`, preferring recent values;
    /// when only the element type is wrong, a cast of one to an accepted type.
    pub fn pick(&mut self, accept: Accept, ranks: std::ops::RangeInclusive<usize>) -> Option<Var> {
        let fits = |t: &VarType| ranks.contains(&t.rank());
        let handles = self.handles();
        let takes = |s: ScalarType| accept.allows(s) && handles(s);
        if let Some(v) = self.pick_where(|t| fits(t) && takes(t.scalar)) {
            return Some(v);
        }
        let v = self.pick_where(fits)?;
        let to = self.accepted_type(accept)?;
        self.cast(&v, to)
    }

    /// A type `accept` allows (and the compiler handles for the row being made), drawn;
    /// `None` when there is none.
    pub fn accepted_type(&mut self, accept: Accept) -> Option<ScalarType> {
        let options: Vec<ScalarType> = ScalarType::ALL
            .into_iter()
            .filter(|s| accept.allows(*s) && (self.handles())(*s))
            .collect();
        // float32 first: the most used type, and every accept but IntOrBool has it.
        if options.contains(&ScalarType::F32) && self.u.ratio(2, 3).unwrap_or(true) {
            return Some(ScalarType::F32);
        }
        if options.is_empty() {
            return None;
        }
        Some(options[self.u.choose_index(options.len()).unwrap_or(0)])
    }

    /// `var` cast to `to`.
    pub fn cast(&mut self, var: &Var, to: ScalarType) -> Option<Var> {
        let mut ty = self.ty(var);
        if ty.scalar == to {
            return Some(var.clone());
        }
        ty.scalar = to;
        self.emit(
            format!("{{0}}.to({})", to.global()),
            vec![var.clone()],
            ty,
            true,
            true,
        )
    }

    /// A value satisfying `pred`, preferring recent ones (the smaller of two draws counts
    /// back from the newest).
    pub fn pick_where(&mut self, pred: impl Fn(&VarType) -> bool) -> Option<Var> {
        let candidates: Vec<Var> = self
            .pool
            .iter()
            .filter(|v| pred(&self.program.types[*v]))
            .cloned()
            .collect();
        if candidates.is_empty() {
            return None;
        }
        let n = candidates.len();
        let back = self
            .u
            .choose_index(n)
            .unwrap_or(0)
            .min(self.u.choose_index(n).unwrap_or(0));
        Some(candidates[n - 1 - back].clone())
    }

    /// `var` reshaped to rank `rank` (leading dims merged, or leading 1s added).
    pub fn to_rank(&mut self, var: &Var, rank: usize) -> Option<Var> {
        let ty = self.ty(var);
        if ty.rank() == rank {
            return Some(var.clone());
        }
        self.reshape(var, ranked_shape(&ty.shape, rank))
    }

    /// `var` reshaped to `shape` (of the same element count).
    pub fn reshape(&mut self, var: &Var, shape: Vec<usize>) -> Option<Var> {
        let scalar = self.ty(var).scalar;
        let list = shape_literal(&shape);
        self.emit(
            format!("torch.reshape({{0}}, {list})"),
            vec![var.clone()],
            VarType::new(scalar, shape),
            false,
            false,
        )
    }

    /// An integer from the bytes in `[lo, hi]` (`lo` when they run out or `hi < lo`).
    pub fn int(&mut self, lo: i64, hi: i64) -> i64 {
        self.u.int_in_range(lo..=hi.max(lo)).unwrap_or(lo)
    }

    /// A coin flip from the bytes.
    pub fn flip(&mut self) -> bool {
        self.u.arbitrary::<bool>().unwrap_or(false)
    }
}

/// `shape` at rank `rank`: its leading dims merged, or leading 1s added.
pub fn ranked_shape(shape: &[usize], rank: usize) -> Vec<usize> {
    if shape.len() < rank {
        std::iter::repeat_n(1, rank - shape.len())
            .chain(shape.iter().copied())
            .collect()
    } else {
        let cut = shape.len() - rank + 1;
        std::iter::once(shape[..cut].iter().product())
            .chain(shape[cut..].iter().copied())
            .collect()
    }
}

/// `[a, b, c]`; a 1-tuple as `[a]`.
pub fn shape_literal(dims: &[usize]) -> String {
    let items: Vec<String> = dims.iter().map(|d| d.to_string()).collect();
    format!("[{}]", items.join(", "))
}

/// Integer index values in `[0, bound)`; distinct along `dim` within each slice when given
/// (the index's size along `dim` must not exceed `bound`).
fn indices(ty: &TensorType, dim: Option<usize>, bound: usize, rng: &mut ChaCha8Rng) -> Tensor {
    use rand::seq::SliceRandom;
    use rand::Rng;
    let n = ty.numel();
    let values: Vec<f64> = match dim {
        None => (0..n)
            .map(|_| rng.random_range(0..bound.max(1)) as f64)
            .collect(),
        Some(d) => {
            let inner: usize = ty.shape[d + 1..].iter().product();
            let len = ty.shape[d];
            let outer = n / (len * inner).max(1);
            let mut values = vec![0.0; n];
            for o in 0..outer {
                for i in 0..inner {
                    let mut perm: Vec<usize> = (0..bound).collect();
                    perm.shuffle(rng);
                    for k in 0..len {
                        values[(o * len + k) * inner + i] = perm[k % bound.max(1)] as f64;
                    }
                }
            }
            values
        }
    };
    Tensor {
        shape: ty.shape.clone(),
        data: crate::ir::Buffer::from_f64(ty.dtype, &values),
    }
}

/// Where a row's instantiation started, to roll it back when it fails.
#[derive(Clone, Copy, Debug)]
pub struct Mark {
    body: usize,
    pool: usize,
    params: usize,
}

impl<'a, 'b> Builder<'a, 'b> {
    /// A generation over `u`, its parameter values drawn from `seed`, with an empty program.
    pub fn new(u: &'a mut Unstructured<'b>, seed: u64) -> Self {
        Builder {
            u,
            program: Program::default(),
            rng: ChaCha8Rng::seed_from_u64(seed),
            pool: Vec::new(),
            handled: None,
            weights: BTreeSet::new(),
        }
    }

    /// Starts a new packed component: no earlier value may be read.
    pub fn start_component(&mut self) {
        self.pool.clear();
    }

    /// Adds a program input of type `ty` that later statements may read.
    pub fn input(&mut self, ty: VarType) {
        let p = self.param(ty, Values::Any);
        self.pool.push(p);
    }

    /// The values statements of the current component may read, oldest first.
    pub fn pool(&self) -> impl Iterator<Item = &Var> {
        self.pool.iter()
    }

    /// Limits the element types the next row may read to `handled` (`None`: every type).
    pub fn handle_only(&mut self, handled: Option<&'a BTreeSet<ScalarType>>) {
        self.handled = handled;
    }

    /// Where the program stands now.
    pub fn mark(&self) -> Mark {
        Mark {
            body: self.program.body.len(),
            pool: self.pool.len(),
            params: self.program.params.len(),
        }
    }

    /// Drops the statements, readable values and parameters added since `mark` (the
    /// adapters and parameters of a failed instantiation).
    pub fn roll_back(&mut self, mark: Mark) {
        self.program.body.truncate(mark.body);
        self.pool.truncate(mark.pool);
        for p in self.program.params.drain(mark.params..) {
            self.program.profile.remove(&p);
            self.weights.remove(&p);
        }
    }
}
