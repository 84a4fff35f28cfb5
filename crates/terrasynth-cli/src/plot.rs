//! A small log-log line plot drawn pixel by pixel into an RGB image (no plotting crate):
//! frame, decade ticks and labels on both axes, one coloured polyline per series with dot
//! markers, and a legend. Text uses a built-in 5×7 bitmap font (upper case, digits, a few
//! signs), drawn at 2× scale.

use image::{Rgb, RgbImage};
use terrasynth::render::font::glyph;

/// One line of the plot: a name and its (x, y) points, both > 0.
pub struct Series {
    /// Legend label.
    pub name: String,
    /// Points, in increasing x.
    pub points: Vec<(f64, f64)>,
}

const WIDTH: u32 = 900;
const HEIGHT: u32 = 600;
const LEFT: i64 = 90;
const RIGHT: i64 = 260;
const TOP: i64 = 40;
const BOTTOM: i64 = 70;
const TEXT_SCALE: i64 = 2;

/// Distinct colours (Tableau 10), cycled.
const COLOURS: &[[u8; 3]] = &[
    [31, 119, 180],
    [255, 127, 14],
    [44, 160, 44],
    [214, 39, 40],
    [148, 103, 189],
    [140, 86, 75],
    [227, 119, 194],
    [127, 127, 127],
    [188, 189, 34],
    [23, 190, 207],
];

struct Canvas {
    img: RgbImage,
}

impl Canvas {
    fn put(&mut self, x: i64, y: i64, c: [u8; 3]) {
        if x >= 0 && y >= 0 && (x as u32) < self.img.width() && (y as u32) < self.img.height() {
            self.img.put_pixel(x as u32, y as u32, Rgb(c));
        }
    }

    fn rect(&mut self, x0: i64, y0: i64, x1: i64, y1: i64, c: [u8; 3]) {
        for y in y0..=y1 {
            for x in x0..=x1 {
                self.put(x, y, c);
            }
        }
    }

    /// A line `thick` pixels wide (Bresenham, with a square pen).
    fn line(&mut self, (mut x0, mut y0): (i64, i64), (x1, y1): (i64, i64), thick: i64, c: [u8; 3]) {
        let (dx, dy) = ((x1 - x0).abs(), -(y1 - y0).abs());
        let (sx, sy) = (if x0 < x1 { 1 } else { -1 }, if y0 < y1 { 1 } else { -1 });
        let mut err = dx + dy;
        let r = thick / 2;
        loop {
            self.rect(x0 - r, y0 - r, x0 + r, y0 + r, c);
            if x0 == x1 && y0 == y1 {
                break;
            }
            let e2 = 2 * err;
            if e2 >= dy {
                err += dy;
                x0 += sx;
            }
            if e2 <= dx {
                err += dx;
                y0 += sy;
            }
        }
    }

    /// Text with its top-left corner at (x, y).
    fn text(&mut self, x: i64, y: i64, s: &str, c: [u8; 3]) {
        for (i, ch) in s.chars().enumerate() {
            let g = glyph(ch);
            let gx = x + i as i64 * 6 * TEXT_SCALE;
            for (row, bits) in g.iter().enumerate() {
                for col in 0..5 {
                    if bits & (0x10 >> col) != 0 {
                        let px = gx + col * TEXT_SCALE;
                        let py = y + row as i64 * TEXT_SCALE;
                        self.rect(px, py, px + TEXT_SCALE - 1, py + TEXT_SCALE - 1, c);
                    }
                }
            }
        }
    }
}

/// Width in pixels of `s` drawn with [`Canvas::text`].
fn text_width(s: &str) -> i64 {
    s.chars().count() as i64 * 6 * TEXT_SCALE
}

/// A compact label for a power of ten.
fn decade_label(e: i32) -> String {
    let v = 10f64.powi(e);
    if (0..=6).contains(&e) { format!("{v}") } else { format!("1E{e}") }
}

/// Draws a log-log plot of `series` (x = map side in cells, y = seconds) with axis titles.
pub fn loglog(series: &[Series], x_title: &str, y_title: &str) -> RgbImage {
    let mut cv = Canvas { img: RgbImage::from_pixel(WIDTH, HEIGHT, Rgb([255, 255, 255])) };
    let pts = series.iter().flat_map(|s| s.points.iter()).filter(|p| p.0 > 0.0 && p.1 > 0.0);
    let (mut x_lo, mut x_hi, mut y_lo, mut y_hi) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
    for &(x, y) in pts {
        x_lo = x_lo.min(x.log10());
        x_hi = x_hi.max(x.log10());
        y_lo = y_lo.min(y.log10());
        y_hi = y_hi.max(y.log10());
    }
    if x_lo > x_hi {
        (x_lo, x_hi, y_lo, y_hi) = (2.0, 3.0, -3.0, 0.0);
    }
    // Pad the axes to whole decades (y) and a little margin (x).
    let (y_lo, y_hi) = (y_lo.floor(), y_hi.ceil().max(y_lo.floor() + 1.0));
    let pad = ((x_hi - x_lo) * 0.05).max(0.05);
    let (x_lo, x_hi) = (x_lo - pad, x_hi + pad);
    let (pw, ph) = (WIDTH as i64 - LEFT - RIGHT, HEIGHT as i64 - TOP - BOTTOM);
    let to_px = |x: f64, y: f64| -> (i64, i64) {
        let px = LEFT + ((x.log10() - x_lo) / (x_hi - x_lo) * pw as f64).round() as i64;
        let py = TOP + ph - ((y.log10() - y_lo) / (y_hi - y_lo) * ph as f64).round() as i64;
        (px, py)
    };
    let black = [0, 0, 0];
    let grid = [225, 225, 225];
    // Horizontal decade grid lines and y labels.
    for e in (y_lo as i32)..=(y_hi as i32) {
        let (_, py) = to_px(10f64.powf(x_lo), 10f64.powi(e));
        cv.line((LEFT, py), (LEFT + pw, py), 1, grid);
        cv.line((LEFT - 6, py), (LEFT, py), 1, black);
        let label = decade_label(e);
        cv.text(LEFT - 10 - text_width(&label), py - 7, &label, black);
    }
    // Vertical ticks at every x that appears in the data (map sides).
    let mut xs: Vec<f64> = series.iter().flat_map(|s| s.points.iter().map(|p| p.0)).collect();
    xs.sort_by(f64::total_cmp);
    xs.dedup();
    for &x in &xs {
        let (px, _) = to_px(x, 10f64.powf(y_lo));
        cv.line((px, TOP), (px, TOP + ph), 1, grid);
        cv.line((px, TOP + ph), (px, TOP + ph + 6), 1, black);
        let label = format!("{x}");
        cv.text(px - text_width(&label) / 2, TOP + ph + 12, &label, black);
    }
    // Frame.
    cv.line((LEFT, TOP), (LEFT + pw, TOP), 1, black);
    cv.line((LEFT, TOP + ph), (LEFT + pw, TOP + ph), 1, black);
    cv.line((LEFT, TOP), (LEFT, TOP + ph), 1, black);
    cv.line((LEFT + pw, TOP), (LEFT + pw, TOP + ph), 1, black);
    // Titles.
    cv.text(LEFT + pw / 2 - text_width(x_title) / 2, HEIGHT as i64 - 28, x_title, black);
    cv.text(LEFT, 12, y_title, black);
    // Series and legend.
    for (i, s) in series.iter().enumerate() {
        let c = COLOURS[i % COLOURS.len()];
        let px: Vec<(i64, i64)> =
            s.points.iter().filter(|p| p.0 > 0.0 && p.1 > 0.0).map(|&(x, y)| to_px(x, y)).collect();
        for w in px.windows(2) {
            cv.line(w[0], w[1], 3, c);
        }
        for &(x, y) in &px {
            cv.rect(x - 4, y - 4, x + 4, y + 4, c);
        }
        let ly = TOP + 10 + i as i64 * 22;
        let lx = LEFT + pw + 20;
        cv.line((lx, ly + 7), (lx + 24, ly + 7), 3, c);
        cv.text(lx + 32, ly, &s.name, black);
    }
    cv.img
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn series_pixels_are_coloured_and_monotone_lines_rise() {
        let s = vec![Series { name: "a".into(), points: vec![(100.0, 0.001), (1000.0, 0.1)] }];
        let img = loglog(&s, "SIDE", "SECONDS");
        assert_eq!(img.dimensions(), (WIDTH, HEIGHT));
        let blue = Rgb(COLOURS[0]);
        let count = img.pixels().filter(|p| **p == blue).count();
        assert!(count > 500, "only {count} series pixels");
        // The first point is lower (larger y) than the last.
        let first =
            img.enumerate_pixels().filter(|(x, _, p)| **p == blue && *x < 200).map(|(_, y, _)| y).max();
        let last = img
            .enumerate_pixels()
            .filter(|(x, _, p)| **p == blue && *x > 500 && *x < 640)
            .map(|(_, y, _)| y)
            .min();
        assert!(first.unwrap() > last.unwrap());
    }

    #[test]
    fn glyphs_cover_names_and_numbers() {
        for c in "abcdefghijklmnopqrstuvwxyz0123456789-.".chars() {
            assert_ne!(glyph(c), [0; 7], "{c}");
        }
    }
}
