//! The public `Pool`'s calls, one file a family: lease calls (`leases.rs`), operator calls
//! (`operator.rs`) and calls that read (`reads.rs`). Each is "check the arguments, then run
//! the rule through `Pool::apply` or `Pool::read`" (`pool/mod.rs`); the rules themselves are
//! `pool/`'s files on `Core`. Only `impl Pool` blocks: nothing here keeps state.

mod leases;
mod operator;
mod reads;
