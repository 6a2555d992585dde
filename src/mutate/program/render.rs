//! Program → source text in one of two dialects ([`Dialect`]). The entry function `main`
//! takes the graph's inputs and weights and returns the outputs as a tuple.
//! - TorchScript: hoisted functions at the unit's top (callees first) take every captured
//!   value as a typed parameter; overwrites and restores are `fill_`/`copy_`.
//! - Python: each function is a nested `def` hoisted to the top of the scope that calls it
//!   and reads captured values through its closure (only a value its own body rebinds is
//!   passed as a parameter, as Python would otherwise see an unbound local); overwrites and
//!   restores write through an `[...]` view that shares the variable's storage.

use crate::ir::ScalarType;
use crate::mutate::program::{Call, Cond, Function, Program, Scalar, Stmt, Var, VarType};
use std::collections::BTreeSet;
use std::fmt::Write;

/// The entry function's name.
pub const ENTRY: &str = "main";

/// The language a program is rendered in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dialect {
    /// TorchScript (`torch::jit::compile`): no nested `def`, typed signatures.
    TorchScript,
    /// Plain Python for eager and `torch.compile`: closures, hoisting, views.
    Python,
}

fn shape_list(ty: &VarType) -> String {
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
    dialect: Dialect,
    out: String,
}

/// Every variable `body` (re)binds in its function scope, `if` bodies included.
fn rebinds(body: &[Stmt], out: &mut BTreeSet<Var>) {
    for s in body {
        out.extend(s.defs());
        if let Stmt::If { body, .. } = s {
            rebinds(body, out);
        }
    }
}

/// The functions `body` invokes directly (through `if` bodies, not through other functions).
fn invoked<'b>(body: &'b [Stmt], out: &mut Vec<&'b str>) {
    for s in body {
        match s {
            Stmt::Invoke { function, .. } => out.push(function),
            Stmt::If { body, .. } => invoked(body, out),
            _ => {}
        }
    }
}

impl<'p> Writer<'p> {
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
                            "{var} = torch.empty({}, dtype={}, device={like}.device)",
                            shape_list(ty),
                            ty.scalar.global(),
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
            Stmt::Overwrite { var, value } => match self.dialect {
                Dialect::TorchScript => {
                    self.line(depth, &format!("{var}.fill_({})", literal(*value)))
                }
                Dialect::Python => self.line(depth, &format!("{var}[...] = {}", literal(*value))),
            },
            Stmt::Restore { var, backup } => match self.dialect {
                Dialect::TorchScript => self.line(depth, &format!("{var}.copy_({backup})")),
                Dialect::Python => self.line(depth, &format!("{var}[...] = {backup}")),
            },
            Stmt::Invoke {
                results,
                function,
                args,
            } => {
                let args = match self.dialect {
                    Dialect::TorchScript => args.clone(),
                    Dialect::Python => self.explicit_params(self.function_named(function)),
                };
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
                // The condition's variable gives the device.
                let device = cond.lhs.var();
                for d in defs {
                    let ty = &self.program.types[d];
                    self.line(
                        depth + 1,
                        &format!(
                            "{d} = torch.zeros({}, dtype={}, device={device}.device)",
                            shape_list(ty),
                            ty.scalar.global()
                        ),
                    );
                }
                if defs.is_empty() {
                    self.line(depth + 1, "pass");
                }
            }
        }
    }

    fn function_named(&self, name: &str) -> &'p Function {
        self.program
            .functions
            .iter()
            .find(|f| f.name == name)
            .expect("an invoked function is defined")
    }

    /// The parameters a nested Python function takes explicitly: those its own body rebinds
    /// (a closure read of such a name would hit the unbound local). The rest are captured.
    fn explicit_params(&self, f: &Function) -> Vec<Var> {
        let mut bound = BTreeSet::new();
        rebinds(&f.body, &mut bound);
        f.params
            .iter()
            .filter(|p| bound.contains(*p))
            .cloned()
            .collect()
    }

    fn function(
        &mut self,
        depth: usize,
        name: &str,
        params: &[Var],
        body: &[Stmt],
        returns: &[Var],
    ) {
        match self.dialect {
            Dialect::TorchScript => {
                let params: Vec<String> = params.iter().map(|p| format!("{p}: Tensor")).collect();
                let tuple = vec!["Tensor"; returns.len()].join(", ");
                self.line(
                    depth,
                    &format!("def {name}({}) -> Tuple[{tuple}]:", params.join(", ")),
                );
            }
            Dialect::Python => {
                self.line(depth, &format!("def {name}({}):", params.join(", ")));
                let mut callees = Vec::new();
                invoked(body, &mut callees);
                for callee in callees {
                    let f = self.function_named(callee);
                    let explicit = self.explicit_params(f);
                    self.function(depth + 1, &f.name, &explicit, &f.body, &f.returns);
                }
            }
        }
        for s in body {
            self.stmt(depth + 1, s);
        }
        let trailing = if returns.len() == 1 { "," } else { "" };
        self.line(
            depth + 1,
            &format!("return ({}{trailing})", returns.join(", ")),
        );
        if depth == 0 {
            self.line(0, "");
        }
    }
}

/// The source of `program` in `dialect`; [`ENTRY`] runs it. A Python program names element
/// types by module globals ([`ScalarType::global`]) that a run may rebind; TorchScript
/// names them directly.
pub fn render(program: &Program, dialect: Dialect) -> String {
    let mut w = Writer {
        program,
        dialect,
        out: String::new(),
    };
    match dialect {
        Dialect::TorchScript => {
            for f in &program.functions {
                w.function(0, &f.name, &f.params, &f.body, &f.returns);
            }
        }
        Dialect::Python => {
            w.line(0, "import torch\n");
            for s in ScalarType::ALL {
                w.line(0, &format!("{} = torch.{}", s.global(), s.torch_name()));
            }
            w.line(0, "");
        }
    }
    w.function(0, ENTRY, &program.params, &program.body, &program.outputs);
    match dialect {
        Dialect::Python => w.out,
        Dialect::TorchScript => torchscript_spelling(&w.out),
    }
}

/// Python source respelled for `torch::jit::compile`, which resolves neither module globals,
/// `torch.float32`-like constants nor `torch.nn.functional`: the `DT_*` type globals become
/// their `c10::ScalarType` numbers, and `torch.nn.functional.f` the ATen builtin `torch.f`
/// (elu, celu, hardswish, softplus, mish, ...).
pub fn torchscript_spelling(source: &str) -> String {
    ScalarType::ALL.iter().fold(
        source.replace("torch.nn.functional.", "torch."),
        |out, s| out.replace(&s.global(), &s.c10_code().to_string()),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mutate::program::testing::call;
    use std::collections::BTreeMap;

    /// `main(p)`: `a = exp(p)`, then `fn1` (which rebinds `a` through a nested `fn2` call
    /// and reads `p`), returning `b`.
    fn program() -> Program {
        let ty = VarType::new(ScalarType::F32, vec![2]);
        let types: BTreeMap<Var, VarType> = ["p", "a", "b"]
            .iter()
            .map(|v| (v.to_string(), ty.clone()))
            .collect();
        let fn2 = Function {
            name: "fn2".into(),
            params: vec!["a".into()],
            body: vec![Stmt::Restore {
                var: "a".into(),
                backup: "a".into(),
            }],
            returns: vec!["a".into()],
        };
        let fn1 = Function {
            name: "fn1".into(),
            params: vec!["a".into(), "p".into()],
            body: vec![
                Stmt::Invoke {
                    results: vec!["a".into()],
                    function: "fn2".into(),
                    args: vec!["a".into()],
                },
                Stmt::Let {
                    var: "b".into(),
                    call: call("torch.add({0}, {1})", &["a", "p"]),
                },
            ],
            returns: vec!["b".into()],
        };
        Program {
            params: vec!["p".into()],
            body: vec![
                Stmt::Let {
                    var: "a".into(),
                    call: call("torch.exp({0})", &["p"]),
                },
                Stmt::Invoke {
                    results: vec!["b".into()],
                    function: "fn1".into(),
                    args: vec!["a".into(), "p".into()],
                },
            ],
            outputs: vec!["b".into()],
            functions: vec![fn2, fn1],
            types,
            profile: BTreeMap::new(),
            fresh: 0,
        }
    }

    #[test]
    fn python_nests_functions_and_captures_what_they_do_not_rebind() {
        let source = render(&program(), Dialect::Python);
        let expected = "def main(p):\n    def fn1(a):\n        def fn2():\n            return (a,)\n        a = fn2()[0]\n        b = torch.add(a, p)\n        return (b,)\n    a = torch.exp(p)\n    b = fn1(a)[0]\n    return (b,)\n\n";
        // fn2's body only writes `a` in place: captured. fn1 rebinds `a`: explicit. `p` is
        // captured from main.
        assert!(source.starts_with("import torch\n\nDT_BOOL = torch.bool\n"));
        let source = source.split_once("DT_F64 = torch.float64\n\n").unwrap().1;
        assert!(
            source.contains("    def fn1(a):\n        def fn2():\n"),
            "{source}"
        );
        assert!(source.contains("a[...] = a"), "{source}");
        assert!(source.contains("    b = fn1(a)[0]\n"), "{source}");
        assert_eq!(source.replace("            a[...] = a\n", ""), expected);
    }

    #[test]
    fn torchscript_hoists_typed_functions_to_the_top() {
        let source = render(&program(), Dialect::TorchScript);
        assert!(
            source.starts_with("def fn2(a: Tensor) -> Tuple[Tensor]:\n    a.copy_(a)\n"),
            "{source}"
        );
        assert!(
            source.contains("def fn1(a: Tensor, p: Tensor) -> Tuple[Tensor]:"),
            "{source}"
        );
        assert!(source.contains("    b = fn1(a, p)[0]\n"), "{source}");
    }
}
