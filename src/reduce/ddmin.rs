//! Zeller's ddmin over any list: the smallest sublist (order kept) found for which a test
//! still holds. The graph reducer runs it over operator nodes, the state-dependent crash
//! replay over the inputs a worker ran before it died.

/// The smallest sublist of `items` found for which `holds` is true, trying chunks of the
/// current list first and then their complements, the chunk count doubling when neither
/// holds. `holds` is never asked about the whole of `items` (the caller knows it holds).
/// A test that returns false when a budget is spent ends the search with the best list so
/// far.
pub fn ddmin<T: Clone + PartialEq>(items: &[T], mut holds: impl FnMut(&[T]) -> bool) -> Vec<T> {
    let mut keep = items.to_vec();
    let mut n = 2usize;
    while keep.len() >= 2 {
        let chunk = keep.len().div_ceil(n);
        let chunks: Vec<Vec<T>> = keep.chunks(chunk).map(<[T]>::to_vec).collect();
        let mut reduced = false;
        for c in &chunks {
            if holds(c) {
                keep = c.clone();
                n = 2;
                reduced = true;
                break;
            }
        }
        if !reduced && chunks.len() > 2 {
            for c in &chunks {
                let complement: Vec<T> = keep.iter().filter(|k| !c.contains(k)).cloned().collect();
                if holds(&complement) {
                    keep = complement;
                    n = (n - 1).max(2);
                    reduced = true;
                    break;
                }
            }
        }
        if !reduced {
            if n >= keep.len() {
                break;
            }
            n = (2 * n).min(keep.len());
        }
    }
    keep
}

#[cfg(test)]
mod tests {
    use super::ddmin;

    #[test]
    fn finds_the_two_items_that_matter_in_order() {
        let items: Vec<u32> = (0..40).collect();
        let mut asked = 0;
        let kept = ddmin(&items, |c| {
            asked += 1;
            c.contains(&7) && c.contains(&31)
        });
        assert_eq!(kept, vec![7, 31]);
        assert!(asked < 60, "{asked} questions");
    }

    #[test]
    fn a_test_that_never_holds_keeps_everything() {
        let items = vec!['a', 'b', 'c'];
        assert_eq!(ddmin(&items, |_| false), items);
    }

    #[test]
    fn nothing_needed_reduces_to_the_first_single_item() {
        let items = vec![1, 2, 3, 4];
        assert_eq!(ddmin(&items, |_| true), vec![1]);
    }
}
