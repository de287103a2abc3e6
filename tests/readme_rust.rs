//! The README's Rust example is `examples/readme.rs` (which `cargo test` compiles): the block
//! in README.md must be that file without its `//!` header, so the README cannot drift from
//! code that builds.

#[test]
fn the_readme_rust_block_is_the_compiled_example() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let example =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/examples/readme.rs")).unwrap();
    let start = readme.find("```rust\n").expect("a rust block in the README") + "```rust\n".len();
    let block = &readme[start..start + readme[start..].find("```").expect("its end")];
    let body: String = example
        .lines()
        .skip_while(|l| l.starts_with("//!"))
        .skip_while(|l| l.is_empty())
        .map(|l| format!("{l}\n"))
        .collect();
    assert_eq!(block, body, "README.md's rust block differs from examples/readme.rs");
}
