//! Attribute holes in an op's template, filled from the fuzzer's bytes when the op is
//! instantiated: `{f:LO:HI}` a float on a grid of 1/8 in `[LO, HI]`, `{i:LO:HI}` an integer,
//! `{c:a|b|c}` one of the listed literals. Argument holes (`{0}`, `{1}`, ...) are left for the
//! program renderer.

use arbitrary::Unstructured;

fn float_literal(v: f64) -> String {
    let s = format!("{v:?}");
    if s.contains('.') || s.contains('e') {
        s
    } else {
        format!("{s}.0")
    }
}

/// The value of one hole's body (`f:-1:2`, `c:mean|sum`), or `None` when it is not an
/// attribute hole.
fn draw(body: &str, u: &mut Unstructured) -> Option<String> {
    let (kind, spec) = body.split_once(':')?;
    match kind {
        "f" => {
            let (lo, hi) = spec.split_once(':')?;
            let (lo, hi): (f64, f64) = (lo.parse().ok()?, hi.parse().ok()?);
            let steps = ((hi - lo) * 8.0).round() as u32;
            let k = u.int_in_range(0..=steps).unwrap_or(0);
            Some(float_literal(lo + f64::from(k) / 8.0))
        }
        "i" => {
            let (lo, hi) = spec.split_once(':')?;
            let (lo, hi): (i64, i64) = (lo.parse().ok()?, hi.parse().ok()?);
            Some(u.int_in_range(lo..=hi.max(lo)).unwrap_or(lo).to_string())
        }
        "c" => {
            let options: Vec<&str> = spec.split('|').collect();
            let k = u.choose_index(options.len()).unwrap_or(0);
            Some(options[k].to_string())
        }
        _ => None,
    }
}

/// `template` with every attribute hole filled from `u`; other holes stay.
pub fn expand(template: &str, u: &mut Unstructured) -> String {
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let Some(close) = rest[open..].find('}') else {
            break;
        };
        let body = &rest[open + 1..open + close];
        match draw(body, u) {
            Some(value) => out.push_str(&value),
            None => out.push_str(&rest[open..=open + close]),
        }
        rest = &rest[open + close + 1..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attribute_holes_are_filled_and_argument_holes_kept() {
        let bytes = [7u8; 16];
        let mut u = Unstructured::new(&bytes);
        let s = expand(
            "torch.nn.functional.elu({0}, alpha={f:0.5:2}) + {i:1:3} * {c:a|b}",
            &mut u,
        );
        assert!(s.starts_with("torch.nn.functional.elu({0}, alpha="), "{s}");
        assert!(
            !s.contains("{f:") && !s.contains("{i:") && !s.contains("{c:"),
            "{s}"
        );
        let alpha: f64 = s
            .split("alpha=")
            .nth(1)
            .unwrap()
            .split(')')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        assert!((0.5..=2.0).contains(&alpha));
    }
}
