//! `terrasynth`: the command-line tool. Parses flags, validates them, calls the library.

fn main() {
    println!("terrasynth");
}
