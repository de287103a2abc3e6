//! Measures this machine's latency of one dependent memory load for working sets from 1 MiB
//! to 256 MiB (a pointer chase through a random cycle). It explains the engine benchmark:
//! once a pool's cells outgrow the caches, each cache miss costs what this prints.
//! `cargo run --release --example memory_latency`

fn main() {
    for mb in [1usize, 2, 4, 6, 8, 16, 64, 256] {
        let n = mb * 1024 * 1024 / 64;
        // One random cycle through all nodes (Sattolo), one node per 64-byte line.
        let mut next: Vec<usize> = (0..n).collect();
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        for i in (1..n).rev() {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            next.swap(i, (x % i as u64) as usize);
        }
        let lines: Vec<[usize; 8]> = next.iter().map(|&v| [v, 0, 0, 0, 0, 0, 0, 0]).collect();
        let steps = 5_000_000;
        let mut p = 0;
        let start = std::time::Instant::now();
        for _ in 0..steps {
            p = lines[p][0];
        }
        let ns = start.elapsed().as_nanos() as f64 / steps as f64;
        println!("{mb:>4} MiB working set: {ns:6.1} ns per dependent load (end {p})");
    }
}
