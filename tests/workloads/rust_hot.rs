// A Rust workload for tests/e2e/rust_names.sh: a generic function (fill)
// inserting into a HashMap in a loop for about ARG seconds, so the hot
// code is hashbrown's generic RawTable methods, monomorphized here.
use std::collections::HashMap;
use std::time::{Duration, Instant};

#[inline(never)]
fn fill<K: std::hash::Hash + Eq + Copy, V: Copy>(m: &mut HashMap<K, V>, keys: &[K], v: V) -> usize {
    for k in keys {
        m.insert(*k, v);
    }
    m.len()
}

fn main() {
    let secs: f64 = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(1.0);
    let until = Instant::now() + Duration::from_secs_f64(secs);
    let keys: Vec<u64> = (0..4096u64).map(|i| i.wrapping_mul(0x9e3779b97f4a7c15)).collect();
    let mut total = 0usize;
    while Instant::now() < until {
        let mut m: HashMap<u64, u32> = HashMap::new();
        total += fill(&mut m, &keys, 7);
    }
    println!("{}", total);
}
