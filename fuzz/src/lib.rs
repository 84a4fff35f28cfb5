//! The fuzz entry functions (see `entries.rs`), as a library for the targets, and the
//! allocation guard every target runs under (`alloc_limit.rs`).
pub mod alloc_limit;
pub mod entries;
pub use entries::*;

#[global_allocator]
static ALLOC: alloc_limit::LimitedAlloc = alloc_limit::LimitedAlloc;
