//! Tiles pictures side by side, each box-filtered down by a whole factor, with its label under
//! it: the README's comparison of our presets with terrain-generator's default output
//! (`scripts/peer-pictures.sh` runs both at about 1025² and calls this).
//!
//! ```text
//! cargo run --release -p terrasynth --example side_by_side -- OUT.png FACTOR LABEL=IMAGE.png...
//! ```
//!
//! Every image must be an 8-bit RGB or RGBA PNG; images of different sizes are cropped to the
//! smallest width and height (1025² and 1024² lose their last row and column) before the
//! filter, so each picture is shown at the same scale.

use std::path::Path;

use terrasynth::io;
use terrasynth::render::plot::{Canvas, text_width};

const GAP: usize = 8;
const LABEL_H: usize = 22;
const BACKGROUND: [u8; 3] = [250, 250, 250];

fn fail(msg: String) -> ! {
    eprintln!("side_by_side: {msg}");
    std::process::exit(2)
}

/// Width, height and RGB pixels of a picture.
type Rgb = (usize, usize, Vec<u8>);

/// The RGB pixels of an 8-bit RGB/RGBA PNG.
fn read_rgb(path: &Path) -> Rgb {
    let img = image::open(path).unwrap_or_else(|e| fail(format!("cannot read {}: {e}", path.display())));
    let rgb = img.to_rgb8();
    (rgb.width() as usize, rgb.height() as usize, rgb.into_raw())
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 3 {
        fail("usage: side_by_side OUT.png FACTOR LABEL=IMAGE.png...".into());
    }
    let factor: usize = match args[1].parse() {
        Ok(f) if (1..=16).contains(&f) => f,
        _ => fail(format!("FACTOR = {}: allowed an integer in 1..=16", args[1])),
    };
    let pictures: Vec<(String, Rgb)> = args[2..]
        .iter()
        .map(|a| {
            let (label, path) =
                a.split_once('=').unwrap_or_else(|| fail(format!("{a}: expected LABEL=IMAGE.png")));
            (label.to_string(), read_rgb(Path::new(path)))
        })
        .collect();
    let side_w = pictures.iter().map(|(_, p)| p.0).min().unwrap_or(0) / factor;
    let side_h = pictures.iter().map(|(_, p)| p.1).min().unwrap_or(0) / factor;
    let n = pictures.len();
    let (w, h) = (n * side_w + (n + 1) * GAP, side_h + 2 * GAP + LABEL_H);
    let mut img = Canvas::new(w, h, BACKGROUND);
    for (k, (label, (pw, _, rgb))) in pictures.iter().enumerate() {
        let x0 = GAP + k * (side_w + GAP);
        for y in 0..side_h {
            for x in 0..side_w {
                let mut sum = [0u32; 3];
                for dy in 0..factor {
                    for dx in 0..factor {
                        let i = ((y * factor + dy) * pw + x * factor + dx) * 3;
                        for c in 0..3 {
                            sum[c] += rgb[i + c] as u32;
                        }
                    }
                }
                let area = (factor * factor) as u32;
                let px = sum.map(|s| ((s + area / 2) / area) as u8);
                img.put((x0 + x) as i64, (GAP + y) as i64, px);
            }
        }
        let tw = text_width(label, 2);
        let tx = x0 as i64 + (side_w as i64 - tw).max(0) / 2;
        img.text_clipped(tx, (GAP + side_h + 6) as i64, label, 2, (x0 + side_w) as i64, [30, 30, 30]);
    }
    let out = Path::new(&args[0]);
    io::png::write_rgb8(out, w, h, img.as_rgb()).unwrap_or_else(|e| fail(format!("{}: {e}", out.display())));
    eprintln!("wrote {} ({w}×{h})", out.display());
}
