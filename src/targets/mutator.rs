//! The structure-aware libFuzzer mutator behind [`fuzz_target_glue!`](crate::fuzz_target_glue)'s
//! `fuzz_mutator!` and `fuzz_crossover!`. It knows a graph input's layout
//! ([`Input::Graph`]: the target's header, the [`CONFIG_BYTES`] swarm config, then
//! [`STEP_BYTES`] insertion-step chunks) and makes one change a decoder reads as one change:
//! one header byte, one config field ([`CONFIG_FIELDS`]), a few bytes of one step chunk; or it
//! inserts, deletes, duplicates or swaps whole step chunks, so every later chunk keeps its
//! alignment. Its crossover keeps one parent's header and config and splices the parents'
//! step chunks at a chunk boundary. It also generates a whole fresh recipe ([`Mutation::Fresh`]:
//! random header, config and a full graph's step chunks), as a generational fuzzer would:
//! replayed through tract, 3,074 random full-size recipes reached 15–21 % more of tract's
//! edges than either 30-minute libFuzzer corpus (`docs/feedback-measurements.md`), whose
//! inputs stay small under libFuzzer's length control. And it regrows a parent
//! ([`Mutation::Regrow`]: its header and swarm config, a prefix of its chunks, fresh chunks
//! up to a full-size graph), which took the guided ONNX Runtime campaign from 1.13 to 1.22
//! times pure generation's coverage in `dlcfuzz bench feedback` (300 s, seed 1).
//! One mutation in [`FALLBACK_ONE_IN`], and every mutation
//! and crossover of an input without structure ([`Input::OnnxFile`]), is libFuzzer's own (the
//! caller's fallback, `libfuzzer_sys::fuzzer_mutate`). Everything is a function of the seed
//! and the input, as libFuzzer requires.

use super::Input;
use crate::gen::{CONFIG_BYTES, CONFIG_FIELDS, STEP_BYTES};
use rand::seq::IndexedRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// libFuzzer's own mutation: `fuzzer_mutate(data, size, max_size)` mutates `data[..size]`
/// in place into at most `max_size` bytes and returns the new size.
pub type Fallback<'f> = dyn FnMut(&mut [u8], usize, usize) -> usize + 'f;

/// One mutation of a graph input in this many is libFuzzer's own.
pub const FALLBACK_ONE_IN: u32 = 4;

/// Byte values worth trying in any field: the extremes and the signed boundaries.
const INTERESTING: [u8; 6] = [0, 1, 0x7f, 0x80, 0xfe, 0xff];

/// One insertion-step chunk.
type Step = [u8; STEP_BYTES];

/// The mutator of one target's inputs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mutator {
    /// Header bytes before the graph recipe; `None` for an input without structure.
    header: Option<usize>,
    /// Every mutation and crossover a [`Mutation::Fresh`] recipe: pure generation inside
    /// libFuzzer's loop (the parent's bytes only salt the random stream, [`salted`]), the
    /// baseline a guided run is measured against at equal time in the same binary.
    fresh_only: bool,
}

/// The structure-aware mutations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mutation {
    /// One byte of the target's header.
    HeaderByte,
    /// One field of the swarm config: a bit flipped or a byte changed.
    ConfigField,
    /// One to four bytes of one step chunk.
    StepBytes,
    /// A random chunk inserted at a chunk boundary.
    InsertStep,
    /// A chunk copied to a chunk boundary.
    DuplicateStep,
    /// A chunk removed.
    DeleteStep,
    /// Two chunks exchanged.
    SwapSteps,
    /// Everything replaced: random header and config, and as many random step chunks as a
    /// graph of the default size reads ([`FRESH_STEPS`]) and `max_size` allows.
    Fresh,
    /// The parent's header and swarm config kept (its op and dtype masks, its size), a
    /// prefix of its step chunks kept (possibly none), and fresh random chunks after it up to
    /// a full-size graph: a new graph of the parent's op mix, grown from part of the parent
    /// the way NNSmith's insertion grows a fresh one.
    Regrow,
}

/// The step chunks of a fresh recipe: two per node of a default-size graph (backward
/// insertion may use a second attempt per node, [`Input::random_len`]).
const FRESH_STEPS: usize = 2 * crate::gen::Limits::DEFAULT_MAX_NODES;

/// An input cut along its layout.
#[derive(Debug)]
struct Parts {
    /// Header and config, zero-padded to their full length (missing bytes read as zero, so
    /// padding changes nothing the decoder sees).
    head: Vec<u8>,
    /// The whole step chunks.
    steps: Vec<Step>,
    /// A trailing partial chunk, possibly empty.
    tail: Vec<u8>,
}

impl Parts {
    /// Cuts `bytes` after `header` header bytes.
    fn split(header: usize, bytes: &[u8]) -> Parts {
        let head_len = header + CONFIG_BYTES;
        let mut head = bytes[..head_len.min(bytes.len())].to_vec();
        head.resize(head_len, 0);
        let chunks = bytes
            .get(head_len..)
            .unwrap_or_default()
            .chunks_exact(STEP_BYTES);
        let tail = chunks.remainder().to_vec();
        let steps = chunks
            .map(|c| c.try_into().expect("exact chunks"))
            .collect();
        Parts { head, steps, tail }
    }

    /// The joined length.
    fn len(&self) -> usize {
        self.head.len() + self.steps.len() * STEP_BYTES + self.tail.len()
    }

    /// The bytes, cut to at most `max_size`: the partial chunk goes first, then whole chunks
    /// from the end, and only then the head.
    fn join(mut self, max_size: usize) -> Vec<u8> {
        if self.len() > max_size {
            self.tail.clear();
        }
        while self.len() > max_size && self.steps.pop().is_some() {}
        let mut bytes = self.head;
        bytes.truncate(max_size);
        bytes.extend(self.steps.iter().flatten());
        bytes.extend(self.tail);
        bytes
    }

    /// The mutations that apply: chunk insertion only where a chunk still fits in `max_size`.
    fn applicable(&self, header: usize, max_size: usize) -> Vec<Mutation> {
        let n = self.steps.len();
        let room = self.len() + STEP_BYTES <= max_size;
        [
            (Mutation::HeaderByte, header > 0),
            (Mutation::ConfigField, true),
            (Mutation::StepBytes, n > 0),
            (Mutation::InsertStep, room),
            (Mutation::DuplicateStep, room && n > 0),
            (Mutation::DeleteStep, n > 0),
            (Mutation::SwapSteps, n > 1),
            (Mutation::Fresh, self.head.len() + STEP_BYTES <= max_size),
            (Mutation::Regrow, self.head.len() + STEP_BYTES <= max_size),
        ]
        .into_iter()
        .filter_map(|(m, applies)| applies.then_some(m))
        .collect()
    }

    /// Applies `mutation`.
    fn apply(&mut self, mutation: Mutation, header: usize, rng: &mut ChaCha8Rng) {
        let n = self.steps.len();
        match mutation {
            Mutation::HeaderByte => {
                let at = rng.random_range(0..header);
                self.head[at] = mutate_byte(self.head[at], rng);
            }
            Mutation::ConfigField => {
                let (_, field) = CONFIG_FIELDS
                    .choose(rng)
                    .expect("the config has fields")
                    .clone();
                mutate_field(
                    &mut self.head[header + field.start..header + field.end],
                    rng,
                );
            }
            Mutation::StepBytes => {
                let step = &mut self.steps[rng.random_range(0..n)];
                for _ in 0..rng.random_range(1..=4) {
                    let at = rng.random_range(0..STEP_BYTES);
                    step[at] = mutate_byte(step[at], rng);
                }
            }
            Mutation::InsertStep => {
                let mut step = [0; STEP_BYTES];
                rng.fill(&mut step[..]);
                self.steps.insert(rng.random_range(0..=n), step);
            }
            Mutation::DuplicateStep => {
                let step = self.steps[rng.random_range(0..n)];
                self.steps.insert(rng.random_range(0..=n), step);
            }
            Mutation::DeleteStep => {
                self.steps.remove(rng.random_range(0..n));
            }
            Mutation::SwapSteps => {
                let i = rng.random_range(0..n);
                let j = (i + rng.random_range(1..n)) % n;
                self.steps.swap(i, j);
            }
            Mutation::Fresh => {
                rng.fill(&mut self.head[..]);
                self.steps.clear();
                self.grow(rng);
            }
            Mutation::Regrow => {
                self.steps
                    .truncate(rng.random_range(0..=n.min(FRESH_STEPS - 1)));
                self.grow(rng);
            }
        }
    }

    /// Random step chunks appended up to [`FRESH_STEPS`]; the partial chunk dropped.
    fn grow(&mut self, rng: &mut ChaCha8Rng) {
        while self.steps.len() < FRESH_STEPS {
            let mut step = [0; STEP_BYTES];
            rng.fill(&mut step[..]);
            self.steps.push(step);
        }
        self.tail.clear();
    }
}

/// `b` with one bit flipped, nudged by up to 16, replaced by an interesting value, or random.
fn mutate_byte(b: u8, rng: &mut ChaCha8Rng) -> u8 {
    match rng.random_range(0..5) {
        0 => b ^ (1 << rng.random_range(0..8)),
        1 => b.wrapping_add(rng.random_range(1..=16)),
        2 => b.wrapping_sub(rng.random_range(1..=16)),
        3 => *INTERESTING.choose(rng).expect("non-empty"),
        _ => rng.random(),
    }
}

/// One bit of `field` flipped (one op or dtype of a mask), or one of its bytes mutated.
fn mutate_field(field: &mut [u8], rng: &mut ChaCha8Rng) {
    let at = rng.random_range(0..field.len());
    if rng.random_bool(0.5) {
        field[at] ^= 1 << rng.random_range(0..8);
    } else {
        field[at] = mutate_byte(field[at], rng);
    }
}

/// The random stream of one mutation: libFuzzer's `seed` salted with the parents' bytes. A
/// fork-mode run started with `-seed=N` hands every job the same seeds in the same order, so a
/// stream of the seed alone would make every job's fresh recipes the same (a pure-generation
/// run that repeats itself; the 30-minute table in `docs/feedback-measurements.md`); salted,
/// the stream differs with the parent and stays a function of the seed and the input.
fn salted(seed: u32, parents: &[&[u8]]) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::hash::DefaultHasher::new();
    parents.hash(&mut h);
    h.finish() ^ u64::from(seed)
}

/// Copies `bytes` to the start of `out` and returns their length.
fn write(out: &mut [u8], bytes: &[u8]) -> usize {
    out[..bytes.len()].copy_from_slice(bytes);
    bytes.len()
}

impl Mutator {
    /// The mutator of inputs laid out as `input`.
    pub fn of(input: Input) -> Mutator {
        Mutator {
            header: match input {
                Input::Graph { header } => Some(header),
                Input::OnnxFile => None,
            },
            fresh_only: false,
        }
    }

    /// This mutator generating a fresh recipe for every mutation and crossover of a graph
    /// input (inputs without structure keep libFuzzer's own mutations).
    pub fn fresh_only(self) -> Mutator {
        Mutator {
            fresh_only: true,
            ..self
        }
    }

    /// The mutator of the [`TARGETS`](super::TARGETS) row `name`'s inputs; panics on an
    /// unknown name (the fuzz binaries name their own row). With
    /// `DLCFUZZ_STRUCTURED_MUTATOR=0` every mutation and crossover is libFuzzer's own, as
    /// without a custom mutator (the baseline the structure-aware one is measured against);
    /// with `DLCFUZZ_STRUCTURED_MUTATOR=fresh` every one is a fresh recipe (pure generation at
    /// libFuzzer's pace, [`Mutator::fresh_only`]).
    pub fn for_target(name: &str) -> Mutator {
        let input = super::by_name(name).unwrap_or_else(|e| panic!("{e}")).input;
        match std::env::var("DLCFUZZ_STRUCTURED_MUTATOR").as_deref() {
            Ok("0") => Self::of(Input::OnnxFile),
            Ok("fresh") => Self::of(input).fresh_only(),
            _ => Self::of(input),
        }
    }

    /// A fresh recipe of a graph input with `header` header bytes in at most `max_size` bytes.
    fn fresh(header: usize, max_size: usize, rng: &mut ChaCha8Rng) -> Vec<u8> {
        let mut parts = Parts::split(header, &[]);
        parts.apply(Mutation::Fresh, header, rng);
        parts.join(max_size)
    }

    /// Mutates `data[..size]` in place into at most `max_size` bytes and returns the new size
    /// (libFuzzer's custom-mutator contract: `data` holds at least `max(size, max_size)`
    /// bytes). One structure-aware mutation, or `fallback`'s.
    pub fn mutate(
        self,
        data: &mut [u8],
        size: usize,
        max_size: usize,
        seed: u32,
        fallback: &mut Fallback<'_>,
    ) -> usize {
        let mut rng = ChaCha8Rng::seed_from_u64(salted(seed, &[&data[..size]]));
        if let (Some(header), true) = (self.header, self.fresh_only) {
            return write(data, &Self::fresh(header, max_size, &mut rng));
        }
        let header = match self.header {
            Some(header) if !rng.random_ratio(1, FALLBACK_ONE_IN) => header,
            _ => return fallback(data, size, max_size),
        };
        let mut parts = Parts::split(header, &data[..size]);
        let mutation = *parts
            .applicable(header, max_size)
            .choose(&mut rng)
            .expect("a config field always applies");
        parts.apply(mutation, header, &mut rng);
        write(data, &parts.join(max_size))
    }

    /// Crosses `a` and `b` over into `out` (at most `out.len()` bytes) and returns the
    /// length: one parent's header and config, then a prefix of one parent's step chunks and
    /// a suffix of the other's. Without structure, `a` mutated by `fallback`.
    pub fn crossover(
        self,
        a: &[u8],
        b: &[u8],
        out: &mut [u8],
        seed: u32,
        fallback: &mut Fallback<'_>,
    ) -> usize {
        let Some(header) = self.header else {
            let n = write(out, &a[..a.len().min(out.len())]);
            return fallback(out, n, out.len());
        };
        let mut rng = ChaCha8Rng::seed_from_u64(salted(seed, &[a, b]));
        if self.fresh_only {
            return write(out, &Self::fresh(header, out.len(), &mut rng));
        }
        let (a, b) = (Parts::split(header, a), Parts::split(header, b));
        let (first, second) = if rng.random_bool(0.5) {
            (&a, &b)
        } else {
            (&b, &a)
        };
        let head = if rng.random_bool(0.5) { &a } else { &b };
        let cut_first = rng.random_range(0..=first.steps.len());
        let cut_second = rng.random_range(0..=second.steps.len());
        let child = Parts {
            head: head.head.clone(),
            steps: [&first.steps[..cut_first], &second.steps[cut_second..]].concat(),
            tail: second.tail.clone(),
        };
        write(out, &child.join(out.len()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stand-in for `fuzzer_mutate`: reverses the input and appends `0xa5` when there is
    /// room, so that its results are recognizable.
    fn reverse(data: &mut [u8], size: usize, max_size: usize) -> usize {
        let n = size.min(max_size);
        data[..n].reverse();
        if n < max_size {
            data[n] = 0xa5;
            return n + 1;
        }
        n
    }

    /// `n` pseudo-random bytes from `seed`.
    fn bytes(seed: u64, n: usize) -> Vec<u8> {
        let mut v = vec![0; n];
        ChaCha8Rng::seed_from_u64(seed).fill(v.as_mut_slice());
        v
    }

    /// One mutation of `input` with `max_size`, as libFuzzer calls it, checked to fit; and
    /// whether it was the fallback's.
    fn mutated(mutator: Mutator, input: &[u8], max_size: usize, seed: u32) -> (Vec<u8>, bool) {
        let mut data = input.to_vec();
        data.resize(input.len().max(max_size), 0);
        let mut fell_back = false;
        let n = mutator.mutate(&mut data, input.len(), max_size, seed, &mut |d, s, m| {
            fell_back = true;
            reverse(d, s, m)
        });
        assert!(n <= max_size, "seed {seed}: {n} > {max_size}");
        data.truncate(n);
        (data, fell_back)
    }

    /// Whether the step region of `bytes` is whole chunks.
    fn aligned(bytes: &[u8]) -> bool {
        bytes.len() >= HEAD && (bytes.len() - HEAD).is_multiple_of(STEP_BYTES)
    }

    const HEADER: usize = 7;
    const HEAD: usize = HEADER + CONFIG_BYTES;

    fn graph() -> Mutator {
        Mutator::of(Input::Graph { header: HEADER })
    }

    #[test]
    fn every_mutation_fits_in_max_size_and_keeps_chunks_aligned() {
        let mut structured = 0;
        for seed in 0..2000u32 {
            let input = bytes(seed.into(), HEAD + seed as usize % 6 * STEP_BYTES);
            let max_size = [HEAD, HEAD + 3 * STEP_BYTES, 4096][seed as usize % 3];
            let (out, fell_back) = mutated(graph(), &input, max_size, seed);
            if !fell_back {
                assert!(aligned(&out), "seed {seed}: {} bytes", out.len());
                structured += 1;
            }
        }
        assert!(structured > 1000, "{structured}");
    }

    #[test]
    fn short_and_oversized_inputs_stay_within_max_size() {
        for seed in 0..512u32 {
            let len = [0, 3, HEADER + 5, 10 * STEP_BYTES + 11][seed as usize % 4];
            let max_size = [1, 20, 100, 5000][seed as usize / 4 % 4];
            let (out, fell_back) = mutated(graph(), &bytes(seed.into(), len), max_size, seed);
            if !fell_back && max_size >= HEAD {
                // Short heads are zero-padded (what the decoder reads anyway); a partial
                // chunk is kept or dropped whole.
                assert!(out.len() >= HEAD, "seed {seed}");
            }
        }
    }

    #[test]
    fn structure_aware_mutations_change_one_region() {
        let input = bytes(1, HEAD + 4 * STEP_BYTES);
        let mut changed = [0; 3];
        for seed in 0..400u32 {
            let (out, fell_back) = mutated(graph(), &input, 4096, seed);
            if fell_back || out.len() != input.len() {
                continue;
            }
            let regions =
                [0..HEADER, HEADER..HEAD, HEAD..input.len()].map(|r| out[r.clone()] != input[r]);
            assert!(regions.iter().filter(|d| **d).count() <= 1, "seed {seed}");
            for (count, region) in changed.iter_mut().zip(regions) {
                *count += usize::from(region);
            }
        }
        assert!(changed.iter().all(|c| *c > 0), "{changed:?}");
    }

    #[test]
    fn chunk_operations_move_whole_chunks() {
        let input = bytes(2, HEAD + 3 * STEP_BYTES);
        let chunks: Vec<&[u8]> = input[HEAD..].chunks(STEP_BYTES).collect();
        let mut resized = 0;
        for seed in 0..400u32 {
            let (out, fell_back) = mutated(graph(), &input, 4096, seed);
            if fell_back || out.len() == input.len() || out.len() == FRESH_LEN {
                continue;
            }
            // Inserted, duplicated or deleted: one chunk more or less, the head untouched,
            // and at most one chunk (an inserted one) new.
            assert_eq!(out.len().abs_diff(input.len()), STEP_BYTES, "seed {seed}");
            assert_eq!(out[..HEAD], input[..HEAD], "seed {seed}");
            let new = out[HEAD..]
                .chunks(STEP_BYTES)
                .filter(|c| !chunks.contains(c))
                .count();
            assert!(new <= 1, "seed {seed}: {new} new chunks");
            resized += 1;
        }
        assert!(resized > 0);
    }

    /// The length of a fresh recipe with room for all of it.
    const FRESH_LEN: usize = HEAD + FRESH_STEPS * STEP_BYTES;

    #[test]
    fn fresh_and_regrown_recipes_are_full_size_graphs_that_fit() {
        let input = bytes(4, HEAD + STEP_BYTES);
        let fresh: Vec<Vec<u8>> = (0..400u32)
            .map(|seed| mutated(graph(), &input, 4096, seed))
            .filter(|(out, fell_back)| !fell_back && out.len() == FRESH_LEN)
            .map(|(out, _)| out)
            .collect();
        // Fresh replaces the head too; Regrow keeps the parent's head, and its first steps
        // are a prefix of the parent's (here: none or its one chunk).
        let (regrown, renewed): (Vec<_>, Vec<_>) =
            fresh.iter().partition(|out| out[..HEAD] == input[..HEAD]);
        assert!(renewed.len() > 10, "{}", renewed.len());
        assert!(regrown.len() > 10, "{}", regrown.len());
        let kept_the_chunk = regrown
            .iter()
            .filter(|out| out[HEAD..HEAD + STEP_BYTES] == input[HEAD..])
            .count();
        assert!(kept_the_chunk > 0 && kept_the_chunk < regrown.len());
        // With little room, whatever is fresh still fits and stays aligned.
        for seed in 0..400u32 {
            let (out, fell_back) = mutated(graph(), &input, HEAD + 3 * STEP_BYTES, seed);
            assert!(out.len() <= HEAD + 3 * STEP_BYTES, "seed {seed}");
            assert!(fell_back || aligned(&out), "seed {seed}");
        }
    }

    #[test]
    fn fresh_only_makes_full_size_recipes_that_differ_by_parent() {
        let fresh = graph().fresh_only();
        let (a, b) = (
            bytes(5, HEAD + 3 * STEP_BYTES),
            bytes(6, HEAD + 9 * STEP_BYTES),
        );
        let mut differ = 0;
        for seed in 0..200u32 {
            let (from_a, fell_back) = mutated(fresh, &a, 4096, seed);
            assert!(!fell_back, "seed {seed}");
            assert_eq!(from_a.len(), FRESH_LEN, "seed {seed}");
            assert_eq!(from_a, mutated(fresh, &a, 4096, seed).0, "seed {seed}");
            // The parent salts the stream: another parent, another recipe for the same seed
            // (every job of a fork-mode run with `-seed` sees the same seeds).
            differ += usize::from(from_a != mutated(fresh, &b, 4096, seed).0);
            let mut out = vec![0; 4096];
            let n = fresh.crossover(&a, &b, &mut out, seed, &mut |_, _, _| {
                panic!("fresh-only crossover fell back")
            });
            assert_eq!(n, FRESH_LEN, "seed {seed}");
        }
        assert_eq!(differ, 200);
        let (small, _) = mutated(fresh, &a, HEAD + 2 * STEP_BYTES, 1);
        assert!(small.len() <= HEAD + 2 * STEP_BYTES && aligned(&small));
    }

    #[test]
    fn a_quarter_falls_back_and_an_onnx_file_always_does() {
        let input = bytes(3, HEAD + 2 * STEP_BYTES);
        let fallbacks = (0..400u32)
            .filter(|seed| mutated(graph(), &input, 4096, *seed).1)
            .count();
        assert!(
            (60..140).contains(&fallbacks),
            "{fallbacks} of 400 fell back"
        );
        for seed in 0..20u32 {
            let (out, fell_back) = mutated(Mutator::of(Input::OnnxFile), b"onnx", 64, seed);
            assert!(fell_back);
            assert_eq!(out, b"xnno\xa5");
        }
    }

    #[test]
    fn mutation_and_crossover_are_functions_of_the_seed() {
        let a = bytes(4, HEAD + 5 * STEP_BYTES);
        let b = bytes(5, HEAD + 2 * STEP_BYTES + 9);
        let cross = |seed| {
            let mut out = vec![0; 4096];
            let n = graph().crossover(&a, &b, &mut out, seed, &mut reverse);
            out.truncate(n);
            out
        };
        for seed in 0..100u32 {
            assert_eq!(
                mutated(graph(), &a, 4096, seed),
                mutated(graph(), &a, 4096, seed)
            );
            assert_eq!(cross(seed), cross(seed));
        }
        let structured: Vec<Vec<u8>> = (0..100)
            .map(|s| mutated(graph(), &a, 4096, s))
            .filter_map(|(out, fell_back)| (!fell_back).then_some(out))
            .collect();
        // Deletions and swaps of 5 chunks have few outcomes; the rest rarely repeat.
        let distinct: std::collections::BTreeSet<_> = structured.iter().collect();
        assert!(
            distinct.len() * 3 >= structured.len() * 2,
            "{} distinct of {}",
            distinct.len(),
            structured.len()
        );
    }

    #[test]
    fn crossover_keeps_a_parents_head_and_splices_whole_chunks() {
        let a = bytes(6, HEAD + 4 * STEP_BYTES);
        let b = bytes(7, HEAD + 3 * STEP_BYTES);
        let parent_chunks: Vec<&[u8]> = a[HEAD..]
            .chunks(STEP_BYTES)
            .chain(b[HEAD..].chunks(STEP_BYTES))
            .collect();
        let mut heads = [0, 0];
        for seed in 0..300u32 {
            let max = [HEAD + STEP_BYTES, 4096][seed as usize % 2];
            let mut out = vec![0; max];
            let n = graph().crossover(&a, &b, &mut out, seed, &mut reverse);
            assert!(n <= max);
            let out = &out[..n];
            let from_a = out[..HEAD] == a[..HEAD];
            assert!(from_a || out[..HEAD] == b[..HEAD], "seed {seed}");
            heads[usize::from(from_a)] += 1;
            assert!(aligned(out), "seed {seed}");
            assert!(out[HEAD..]
                .chunks(STEP_BYTES)
                .all(|c| parent_chunks.contains(&c)));
        }
        assert!(heads[0] > 0 && heads[1] > 0, "{heads:?}");
    }

    #[test]
    fn an_onnx_file_crossover_is_the_fallback_on_the_first_parent() {
        let mut out = vec![0; 8];
        let n = Mutator::of(Input::OnnxFile).crossover(b"abc", b"xyz", &mut out, 1, &mut reverse);
        assert_eq!(&out[..n], b"cba\xa5");
    }

    #[test]
    fn the_row_names_the_layout() {
        assert_eq!(
            Mutator::for_target("ort_load"),
            Mutator::of(Input::OnnxFile)
        );
        assert_eq!(
            Mutator::for_target("ort_cpu_mutated"),
            Mutator::of(Input::Graph {
                header: crate::mutate::levels::HEADER_BYTES
            })
        );
    }
}
