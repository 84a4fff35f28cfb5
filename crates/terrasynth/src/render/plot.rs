//! Pictures drawn pixel by pixel into an RGB buffer (no plotting or font crate): a [`Canvas`]
//! with filled rectangles, thick lines and bitmap text in the 5×7 [`font`](super::font), and
//! [`loglog`], the log-log line plot of `terrasynth eval`'s `time.png` (frame, decade ticks
//! and labels on both axes, one coloured polyline per series with square markers, a legend).
//! Writing the picture to a file is the caller's job (`io::png::write_rgb8`).

use super::font::glyph;

/// An RGB image, 3 bytes per pixel, row-major, with drawing primitives clipped to the image.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Canvas {
    width: usize,
    height: usize,
    rgb: Vec<u8>,
}

impl Canvas {
    /// A `width × height` canvas filled with `colour`.
    pub fn new(width: usize, height: usize, colour: [u8; 3]) -> Self {
        Self { width, height, rgb: std::iter::repeat_n(colour, width * height).flatten().collect() }
    }

    /// Width in pixels.
    pub fn width(&self) -> usize {
        self.width
    }

    /// Height in pixels.
    pub fn height(&self) -> usize {
        self.height
    }

    /// The pixels, `width × height × 3` bytes, row-major.
    pub fn as_rgb(&self) -> &[u8] {
        &self.rgb
    }

    /// The pixels, by value.
    pub fn into_rgb(self) -> Vec<u8> {
        self.rgb
    }

    /// The pixels, mutable (to copy pictures in).
    pub fn as_rgb_mut(&mut self) -> &mut [u8] {
        &mut self.rgb
    }

    /// The colour at `(x, y)`, or `None` outside.
    pub fn pixel(&self, x: usize, y: usize) -> Option<[u8; 3]> {
        (x < self.width && y < self.height).then(|| {
            let i = (y * self.width + x) * 3;
            [self.rgb[i], self.rgb[i + 1], self.rgb[i + 2]]
        })
    }

    /// Sets one pixel; outside the canvas nothing happens.
    pub fn put(&mut self, x: i64, y: i64, c: [u8; 3]) {
        if x >= 0 && y >= 0 && (x as usize) < self.width && (y as usize) < self.height {
            let i = (y as usize * self.width + x as usize) * 3;
            self.rgb[i..i + 3].copy_from_slice(&c);
        }
    }

    /// Fills the rectangle `[x0, x1] × [y0, y1]` (inclusive).
    pub fn rect(&mut self, x0: i64, y0: i64, x1: i64, y1: i64, c: [u8; 3]) {
        for y in y0..=y1 {
            for x in x0..=x1 {
                self.put(x, y, c);
            }
        }
    }

    /// A line `thick` pixels wide (Bresenham, with a square pen).
    pub fn line(&mut self, (mut x0, mut y0): (i64, i64), (x1, y1): (i64, i64), thick: i64, c: [u8; 3]) {
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

    /// Text with its top-left corner at `(x, y)`, each font pixel drawn as a `scale × scale`
    /// square; pixels at `x ≥ right` are left out (a label clipped to its panel).
    pub fn text_clipped(&mut self, x: i64, y: i64, s: &str, scale: i64, right: i64, c: [u8; 3]) {
        for (i, ch) in s.chars().enumerate() {
            let gx = x + i as i64 * 6 * scale;
            for (row, bits) in glyph(ch).iter().enumerate() {
                for col in 0..5 {
                    if bits & (0x10 >> col) != 0 {
                        let (px, py) = (gx + col * scale, y + row as i64 * scale);
                        self.rect(px, py, (px + scale - 1).min(right - 1), py + scale - 1, c);
                    }
                }
            }
        }
    }

    /// Text with its top-left corner at `(x, y)` at `scale` (see [`Canvas::text_clipped`]).
    pub fn text(&mut self, x: i64, y: i64, s: &str, scale: i64, c: [u8; 3]) {
        self.text_clipped(x, y, s, scale, i64::MAX, c);
    }
}

/// Width in pixels of `s` drawn by [`Canvas::text`] at `scale` (6 pixels per character,
/// including the space after the last).
pub fn text_width(s: &str, scale: i64) -> i64 {
    s.chars().count() as i64 * 6 * scale
}

/// One line of a plot: a name and its (x, y) points, both > 0.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Series {
    /// Legend label.
    pub name: String,
    /// Points, in increasing x.
    pub points: Vec<(f64, f64)>,
}

/// Width of [`loglog`]'s picture, pixels.
pub const PLOT_WIDTH: usize = 900;
/// Height of [`loglog`]'s picture, pixels.
pub const PLOT_HEIGHT: usize = 600;
const LEFT: i64 = 90;
const RIGHT: i64 = 260;
const TOP: i64 = 40;
const BOTTOM: i64 = 70;
const TEXT_SCALE: i64 = 2;

/// Distinct series colours (Tableau 10), cycled.
pub const SERIES_COLOURS: &[[u8; 3]] = &[
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

/// A compact label for a power of ten.
fn decade_label(e: i32) -> String {
    let v = 10f64.powi(e);
    if (0..=6).contains(&e) { format!("{v}") } else { format!("1E{e}") }
}

/// Draws a log-log plot of `series` ([`PLOT_WIDTH`] × [`PLOT_HEIGHT`], white background) with
/// axis titles: y padded to whole decades with a grid line per decade, an x tick at every x
/// of the data, points ≤ 0 left out.
///
/// ```
/// use terrasynth::render::plot::{Series, loglog, SERIES_COLOURS};
/// let s = [Series { name: "a".into(), points: vec![(100.0, 0.001), (1000.0, 0.1)] }];
/// let img = loglog(&s, "SIDE", "SECONDS");
/// assert!(img.as_rgb().chunks(3).any(|p| p == SERIES_COLOURS[0]));
/// ```
pub fn loglog(series: &[Series], x_title: &str, y_title: &str) -> Canvas {
    let (width, height) = (PLOT_WIDTH as i64, PLOT_HEIGHT as i64);
    let mut cv = Canvas::new(PLOT_WIDTH, PLOT_HEIGHT, [255, 255, 255]);
    let tw = |s: &str| text_width(s, TEXT_SCALE);
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
    let (pw, ph) = (width - LEFT - RIGHT, height - TOP - BOTTOM);
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
        cv.text(LEFT - 10 - tw(&label), py - 7, &label, TEXT_SCALE, black);
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
        cv.text(px - tw(&label) / 2, TOP + ph + 12, &label, TEXT_SCALE, black);
    }
    // Frame.
    cv.line((LEFT, TOP), (LEFT + pw, TOP), 1, black);
    cv.line((LEFT, TOP + ph), (LEFT + pw, TOP + ph), 1, black);
    cv.line((LEFT, TOP), (LEFT, TOP + ph), 1, black);
    cv.line((LEFT + pw, TOP), (LEFT + pw, TOP + ph), 1, black);
    // Titles.
    cv.text(LEFT + pw / 2 - tw(x_title) / 2, height - 28, x_title, TEXT_SCALE, black);
    cv.text(LEFT, 12, y_title, TEXT_SCALE, black);
    // Series and legend.
    for (i, s) in series.iter().enumerate() {
        let c = SERIES_COLOURS[i % SERIES_COLOURS.len()];
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
        cv.text(lx + 32, ly, &s.name, TEXT_SCALE, black);
    }
    cv
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pixels(img: &Canvas) -> impl Iterator<Item = (usize, usize, [u8; 3])> + '_ {
        (0..img.height()).flat_map(move |y| (0..img.width()).map(move |x| (x, y, img.pixel(x, y).unwrap())))
    }

    #[test]
    fn series_pixels_are_coloured_and_monotone_lines_rise() {
        let s = vec![Series { name: "a".into(), points: vec![(100.0, 0.001), (1000.0, 0.1)] }];
        let img = loglog(&s, "SIDE", "SECONDS");
        assert_eq!((img.width(), img.height()), (PLOT_WIDTH, PLOT_HEIGHT));
        let blue = SERIES_COLOURS[0];
        let count = pixels(&img).filter(|p| p.2 == blue).count();
        assert!(count > 500, "only {count} series pixels");
        // The first point is lower (larger y) than the last.
        let first = pixels(&img).filter(|&(x, _, p)| p == blue && x < 200).map(|(_, y, _)| y).max();
        let last = pixels(&img).filter(|&(x, _, p)| p == blue && x > 500 && x < 640).map(|(_, y, _)| y).min();
        assert!(first.unwrap() > last.unwrap());
    }

    #[test]
    fn glyphs_cover_names_and_numbers() {
        for c in "abcdefghijklmnopqrstuvwxyz0123456789-.".chars() {
            assert_ne!(glyph(c), [0; 7], "{c}");
        }
    }

    #[test]
    fn text_is_drawn_at_scale_and_clipped() {
        // "1" at scale 2: its top row 0x04 sets column 2 → pixels x = 4, 5 at y = 0, 1.
        let mut cv = Canvas::new(12, 14, [0; 3]);
        cv.text(0, 0, "1", 2, [9; 3]);
        assert_eq!(cv.pixel(4, 0), Some([9; 3]));
        assert_eq!(cv.pixel(5, 1), Some([9; 3]));
        assert_eq!(cv.pixel(3, 0), Some([0; 3]));
        let mut clipped = Canvas::new(12, 14, [0; 3]);
        clipped.text_clipped(0, 0, "1", 2, 5, [9; 3]);
        assert_eq!((clipped.pixel(4, 0), clipped.pixel(5, 0)), (Some([9; 3]), Some([0; 3])));
    }
}
