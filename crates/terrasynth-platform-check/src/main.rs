//! Prints the platform-check report (see the library docs); `TERRASYNTH_SIMD` picks the level.

fn main() {
    print!("{}", terrasynth_platform_check::report());
}
