//! Turning a backend's panic into a value: `catch_unwind` plus a process-wide panic hook that
//! stays quiet (and remembers where the panic happened) only on threads that are catching.

use std::cell::{Cell, RefCell};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Once;

thread_local! {
    /// True while this thread runs a closure under [`catch`].
    static CATCHING: Cell<bool> = const { Cell::new(false) };
    /// The location of the last panic caught on this thread.
    static LOCATION: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Wraps the current panic hook once: panics on catching threads record their location and
/// print nothing; every other panic goes to the previous hook (the default one, or
/// libFuzzer's, which aborts).
fn install_hook() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if CATCHING.with(Cell::get) {
                let at = info
                    .location()
                    .map(|l| format!("{}:{}", crate_relative(l.file()), l.line()));
                LOCATION.with(|l| *l.borrow_mut() = at);
            } else {
                previous(info);
            }
        }));
    });
}

/// A source path inside the cargo registry shortened to `<crate>-<version>/<path>`, so that
/// messages read the same on every machine.
fn crate_relative(file: &str) -> &str {
    match file.split_once("/registry/src/") {
        Some((_, rest)) => rest.split_once('/').map_or(rest, |(_, path)| path),
        None => file,
    }
}

/// The message a panic payload carries (`panic!` with a literal or with a format string).
pub fn payload_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "non-string panic payload".to_string()
    }
}

/// Runs `f`, returning `Err("panic: <message> (at <file>:<line>)")` if it panics. The panic
/// prints nothing.
pub fn catch<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    install_hook();
    let was = CATCHING.with(|c| c.replace(true));
    let result = catch_unwind(AssertUnwindSafe(f));
    CATCHING.with(|c| c.set(was));
    result.map_err(|payload| {
        let mut message = format!("panic: {}", payload_message(payload.as_ref()));
        if let Some(at) = LOCATION.with(|l| l.borrow_mut().take()) {
            message.push_str(&format!(" (at {at})"));
        }
        message
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_becomes_its_message_and_location() {
        let err = catch(|| -> u32 { panic!("index {} out of range", 7) }).unwrap_err();
        assert!(err.starts_with("panic: index 7 out of range (at "), "{err}");
        assert!(err.contains("panic.rs:"), "{err}");
        assert_eq!(catch(|| 5), Ok(5));
    }

    #[test]
    fn registry_paths_lose_their_machine_prefix() {
        assert_eq!(
            crate_relative("/root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/smallvec-1.16.5/src/lib.rs"),
            "smallvec-1.16.5/src/lib.rs"
        );
        assert_eq!(
            crate_relative("src/backend/panic.rs"),
            "src/backend/panic.rs"
        );
    }
}
