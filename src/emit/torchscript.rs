//! Program → TorchScript source: hoisted functions first (callees before callers), then
//! `main`, whose parameters are the graph's inputs and weights and which returns the outputs
//! as a tuple.

use crate::ir::TensorType;
use crate::mutate::program::{Call, Cond, Program, Scalar, Stmt, Var};
use std::fmt::Write;

/// The entry function's name.
pub const ENTRY: &str = "main";

fn shape_list(ty: &TensorType) -> String {
    let dims: Vec<String> = ty.shape.iter().map(|d| d.to_string()).collect();
    format!("[{}]", dims.join(", "))
}

fn literal(v: f64) -> String {
    let s = format!("{v:?}");
    if s.contains('.') || s.contains('e') || s.contains("inf") || s.contains("NaN") {
        s
    } else {
        format!("{s}.0")
    }
}

/// `template` with `{k}` replaced by `args[k]`.
fn fill(call: &Call, args: &[String]) -> String {
    let mut out = call.template.clone();
    for (k, a) in args.iter().enumerate().rev() {
        out = out.replace(&format!("{{{k}}}"), a);
    }
    out
}

fn scalar(s: &Scalar) -> String {
    match s {
        Scalar::Element(v, pos) => {
            let idx: Vec<String> = pos.iter().map(|p| p.to_string()).collect();
            if idx.is_empty() {
                format!("float({v})")
            } else {
                format!("float({v}[{}])", idx.join(", "))
            }
        }
        Scalar::Dim(v, k) => format!("{v}.shape[{k}]"),
        Scalar::Rank(v) => format!("len({v}.shape)"),
        Scalar::Max(v) => format!("float({v}.max())"),
        Scalar::Min(v) => format!("float({v}.min())"),
    }
}

fn condition(c: &Cond) -> String {
    let rhs = match c.lhs {
        Scalar::Dim(..) | Scalar::Rank(_) => format!("{}", c.rhs.round() as i64),
        _ => literal(c.rhs),
    };
    format!("{} {} {rhs}", scalar(&c.lhs), c.op)
}

struct Writer<'p> {
    program: &'p Program,
    out: String,
}

impl Writer<'_> {
    fn line(&mut self, depth: usize, text: &str) {
        let _ = writeln!(self.out, "{}{text}", "    ".repeat(depth));
    }

    /// The arguments of an unrolled call at loop index `i` along `axis` of a result of rank
    /// `rank`: each argument's slice at `i` on its broadcast-aligned axis (index 0 where that
    /// dimension is 1; the whole argument where it has no such axis).
    fn sliced_args(&self, args: &[Var], axis: usize, rank: usize, i: &str) -> Vec<String> {
        args.iter()
            .map(|a| {
                let ty = &self.program.types[a];
                let Some(aligned) = (axis + ty.rank()).checked_sub(rank) else {
                    return a.clone();
                };
                if ty.shape[aligned] == 1 {
                    format!("{a}.select({aligned}, 0)")
                } else {
                    format!("{a}.select({aligned}, {i})")
                }
            })
            .collect()
    }

    fn stmt(&mut self, depth: usize, s: &Stmt) {
        match s {
            Stmt::Let { var, call } => {
                self.line(depth, &format!("{var} = {}", fill(call, &call.args)))
            }
            Stmt::Unrolled {
                var,
                call,
                axis,
                comprehension,
            } => {
                let ty = &self.program.types[var];
                let i = format!("i_{var}");
                let args = self.sliced_args(&call.args, *axis, ty.rank(), &i);
                let expr = fill(call, &args);
                let len = ty.shape[*axis];
                if *comprehension {
                    self.line(
                        depth,
                        &format!("{var} = torch.stack([{expr} for {i} in range({len})], {axis})"),
                    );
                } else {
                    self.line(
                        depth,
                        &format!(
                            "{var} = torch.empty({}, dtype={like}.dtype, device={like}.device)",
                            shape_list(ty),
                            like = call.args[0]
                        ),
                    );
                    self.line(depth, &format!("for {i} in range({len}):"));
                    self.line(
                        depth + 1,
                        &format!("{var}.select({axis}, {i}).copy_({expr})"),
                    );
                }
            }
            Stmt::Backup { backup, of } => self.line(depth, &format!("{backup} = {of}.clone()")),
            Stmt::Overwrite { var, value } => {
                self.line(depth, &format!("{var}.fill_({})", literal(*value)))
            }
            Stmt::Restore { var, backup } => self.line(depth, &format!("{var}.copy_({backup})")),
            Stmt::Invoke {
                results,
                function,
                args,
            } => {
                let call = format!("{function}({})", args.join(", "));
                if results.len() == 1 {
                    self.line(depth, &format!("{} = {call}[0]", results[0]));
                } else {
                    self.line(depth, &format!("{} = {call}", results.join(", ")));
                }
            }
            Stmt::If { cond, body, defs } => {
                self.line(depth, &format!("if {}:", condition(cond)));
                for s in body {
                    self.stmt(depth + 1, s);
                }
                if body.is_empty() {
                    self.line(depth + 1, "pass");
                }
                self.line(depth, "else:");
                // Every variable is float32, so the condition's variable gives dtype and device.
                let device = cond.lhs.var();
                for d in defs {
                    let ty = &self.program.types[d];
                    self.line(
                        depth + 1,
                        &format!(
                            "{d} = torch.zeros({}, dtype={device}.dtype, device={device}.device)",
                            shape_list(ty)
                        ),
                    );
                }
                if defs.is_empty() {
                    self.line(depth + 1, "pass");
                }
            }
        }
    }

    fn function(&mut self, name: &str, params: &[Var], body: &[Stmt], returns: &[Var]) {
        let params: Vec<String> = params.iter().map(|p| format!("{p}: Tensor")).collect();
        let tuple = vec!["Tensor"; returns.len()].join(", ");
        self.line(
            0,
            &format!("def {name}({}) -> Tuple[{tuple}]:", params.join(", ")),
        );
        for s in body {
            self.stmt(1, s);
        }
        let trailing = if returns.len() == 1 { "," } else { "" };
        self.line(1, &format!("return ({}{trailing})", returns.join(", ")));
        self.line(0, "");
    }
}

/// The TorchScript source of `program`; [`ENTRY`] runs it.
pub fn render(program: &Program) -> String {
    let mut w = Writer {
        program,
        out: String::new(),
    };
    for f in &program.functions {
        w.function(&f.name, &f.params, &f.body, &f.returns);
    }
    w.function(ENTRY, &program.params, &program.body, &program.outputs);
    w.out
}
