//! A thread-safe cache bounded in bytes, for rasterized glyphs and emoji.
//!
//! Animations (a word that pops, an emoji that bounces) ask for the same glyph at many sizes,
//! so a cache bounded by entry count can grow by hundreds of megabytes over a long video. This
//! one keeps two generations: new entries go into the young one, and once it holds `budget`
//! bytes it becomes the old one and the previous old one is dropped. A hit in the old
//! generation moves the entry back to the young one, so what the current page uses stays. At
//! most twice the budget is held.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::{Mutex, PoisonError};

/// The heap bytes a cached value holds.
pub(crate) trait Weigh {
    fn bytes(&self) -> usize;
}

impl<T: Weigh> Weigh for Option<std::sync::Arc<T>> {
    fn bytes(&self) -> usize {
        self.as_ref().map_or(0, |v| v.bytes())
    }
}

#[derive(Debug)]
struct Generations<K, V> {
    young: HashMap<K, V>,
    old: HashMap<K, V>,
    young_bytes: usize,
}

#[derive(Debug)]
pub(crate) struct ByteBoundedCache<K, V> {
    budget: usize,
    inner: Mutex<Generations<K, V>>,
}

impl<K: Hash + Eq, V: Clone + Weigh> ByteBoundedCache<K, V> {
    pub fn new(budget: usize) -> Self {
        Self {
            budget,
            inner: Mutex::new(Generations {
                young: HashMap::new(),
                old: HashMap::new(),
                young_bytes: 0,
            }),
        }
    }

    /// The value of `key`, made by `make` (outside the lock, so workers do not wait on each
    /// other) when it is not cached.
    pub fn get_or_make(&self, key: K, make: impl FnOnce() -> V) -> V {
        {
            let mut g = self.lock();
            if let Some(hit) = g.young.get(&key) {
                return hit.clone();
            }
            if let Some(hit) = g.old.remove(&key) {
                let value = hit.clone();
                self.insert(&mut g, key, hit);
                return value;
            }
        }
        let value = make();
        let mut g = self.lock();
        self.insert(&mut g, key, value.clone());
        value
    }

    fn insert(&self, g: &mut Generations<K, V>, key: K, value: V) {
        // An entry's own size counts at least a little, so empty values cannot pile up.
        g.young_bytes += value.bytes().max(64);
        g.young.insert(key, value);
        if g.young_bytes >= self.budget {
            g.old = std::mem::take(&mut g.young);
            g.young_bytes = 0;
        }
    }

    pub fn len(&self) -> usize {
        let g = self.lock();
        g.young.len() + g.old.len()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Generations<K, V>> {
        // A panic while holding the lock leaves only cached values behind; they stay valid.
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Clone)]
    struct Blob(usize);

    impl Weigh for Blob {
        fn bytes(&self) -> usize {
            self.0
        }
    }

    #[test]
    fn holds_at_most_twice_the_budget_and_keeps_what_is_used() {
        let cache = ByteBoundedCache::new(1000);
        let mut made = 0;
        for round in 0..50 {
            // Key 0 is used every round; the others only once.
            for key in [0, round + 1] {
                cache.get_or_make(key, || {
                    made += 1;
                    Blob(100)
                });
            }
            let g = cache.lock();
            let held: usize = g.young.values().chain(g.old.values()).map(|b| b.0).sum();
            assert!(held <= 2000, "{held} bytes held");
        }
        assert_eq!(made, 51, "key 0 was made once and kept");
        assert!(cache.len() <= 20, "{} entries", cache.len());
    }
}
