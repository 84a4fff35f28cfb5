//! Typed entry fields that commit on Enter or when they lose focus, never on each keystroke.
//!
//! While the field is focused it edits its own buffer (kept in egui's memory), so typing works
//! whatever the stored value does; when it is not, it shows the stored value (so undo or a
//! preset change show at once). On commit the text is parsed and checked by the caller's
//! `parse` (the library's ranges, see [`crate::limits`]): a good value is returned once; a bad
//! one is kept in the field with its error, which [`error_note`] draws just below the field's
//! row. Nothing is clamped. Escape abandons the typed text.

use eframe::egui::{self, Color32, Key, TextEdit};

/// The edit buffer and the last commit's error of one field.
#[derive(Clone, Default)]
struct EntryState {
    buffer: String,
    error: Option<String>,
}

/// What a field did this frame.
pub struct Entry<T> {
    /// The text field's response.
    pub response: egui::Response,
    /// The value committed this frame (Enter or focus loss with good, changed text).
    pub committed: Option<T>,
    /// The problem with the text last committed (shown until the field is fixed or Escape).
    pub error: Option<String>,
}

/// A single-line field showing `shown` (the stored value as text), `width` points wide and
/// named `name` for screen readers and tests. `salt` makes its id unique within `ui`.
pub fn entry_ui<T>(
    ui: &mut egui::Ui,
    salt: impl std::hash::Hash + std::fmt::Debug,
    name: &str,
    shown: &str,
    width: f32,
    parse: impl FnOnce(&str) -> Result<T, String>,
) -> Entry<T> {
    let id = ui.make_persistent_id(("entry", salt));
    let edit_id = id.with("edit");
    let state: Option<EntryState> = ui.data(|d| d.get_temp(id));
    // A state is kept only while the field has focus or shows an error, so one that is still
    // here holds what was typed: also in the frame after a click elsewhere took the focus, the
    // frame where `lost_focus` commits it (resetting it to `shown` there lost the typed text).
    let mut buffer = match &state {
        Some(s) => s.buffer.clone(),
        None => shown.to_string(),
    };
    let previous_error = state.and_then(|s| s.error);
    let mut edit = TextEdit::singleline(&mut buffer).id(edit_id).desired_width(width);
    if previous_error.is_some() {
        edit = edit.text_color(Color32::from_rgb(255, 120, 110));
    }
    let response = ui.add(edit).accessible_name(name);
    let mut committed = None;
    let mut next = None;
    if response.lost_focus() {
        let escaped = ui.input(|i| i.key_pressed(Key::Escape));
        if !escaped && buffer != shown {
            match parse(&buffer) {
                Ok(v) => committed = Some(v),
                Err(e) => next = Some(EntryState { buffer, error: Some(e) }),
            }
        }
    } else if response.has_focus() || previous_error.is_some() {
        next = Some(EntryState { buffer, error: previous_error });
    }
    let error = next.as_ref().and_then(|s| s.error.clone());
    ui.data_mut(|d| match next {
        Some(s) => {
            d.insert_temp(id, s);
        }
        None => {
            d.remove::<EntryState>(id);
        }
    });
    Entry { response, committed, error }
}

/// Draws a field's error (if any) in red on its own line: call it right after the row holding
/// the field, so the problem shows next to it and covers nothing.
pub fn error_note(ui: &mut egui::Ui, error: Option<&str>) {
    if let Some(e) = error {
        ui.add(
            egui::Label::new(
                egui::RichText::new(format!("Not applied: {e}")).color(Color32::from_rgb(255, 120, 110)),
            )
            .wrap(),
        );
    }
}

/// A slider over `range` = `(lo, hi, logarithmic)` (from [`crate::limits::slider_range`]),
/// without its own value text, that moves [`crate::limits::FINE_DRAG`] times slower while
/// Shift is held (fine adjustment: the value moves by the pointer's motion, not to the
/// pointer). Returns the response; `value` changes while dragging.
pub fn fine_slider(ui: &mut egui::Ui, value: &mut f64, range: (f64, f64, bool)) -> egui::Response {
    let (lo, hi, log) = range;
    let before = *value;
    let r = ui.add(
        egui::Slider::new(value, lo..=hi)
            .logarithmic(log)
            .smallest_positive(crate::limits::log_floor(lo, hi))
            .show_value(false)
            .clamping(egui::SliderClamping::Edits),
    );
    if ui.input(|i| i.modifiers.shift) && (r.dragged() || r.drag_started()) {
        *value = crate::limits::fine_drag(before, r.drag_delta().x as f64, r.rect.width() as f64, range);
    }
    r
}

/// One row: `name` (shown with a capital), a slider over `range` (logarithmic when `log`;
/// Shift drags ten times finer) and a typed field beside it, named "`name` field", that
/// commits on Enter or focus loss (checked against `range`, not clamped), then `unit`; returns
/// the typed field's error, if any (draw it with [`error_note`]). `salt` keeps the field's id
/// unique between panels.
pub fn typed_slider(
    ui: &mut egui::Ui,
    salt: &str,
    (name, unit, tip): (&str, &str, &str),
    value: &mut f64,
    range: std::ops::RangeInclusive<f64>,
    log: bool,
) -> Option<String> {
    ui.horizontal(|ui| {
        let mut label = name.to_string();
        if let Some(first) = label.get(..1) {
            label.replace_range(..1, &first.to_uppercase());
        }
        ui.label(label);
        fine_slider(ui, value, (*range.start(), *range.end(), log)).on_hover_text(tip);
        let shown = format!("{:.4}", *value).trim_end_matches('0').trim_end_matches('.').to_string();
        let e =
            entry_ui(ui, (salt, name), &format!("{name} field"), &shown, 60.0, |t| parse_in(t, name, &range));
        if let Some(v) = e.committed {
            *value = v;
        }
        ui.label(unit);
        e.error
    })
    .inner
}

/// Parses a typed slider value and checks it against `range` (no clamping).
fn parse_in(text: &str, name: &str, range: &std::ops::RangeInclusive<f64>) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(v) if range.contains(&v) => Ok(v),
        _ => Err(format!(
            "`{name}` = {}: allowed a number in [{}, {}]",
            text.trim(),
            range.start(),
            range.end()
        )),
    }
}

/// Gives a Tab (the focus moving to the next or previous field) a frame of its own when it
/// shares one with typed keys, so text typed before it reaches the field it was typed in and
/// text typed after it the field it moves to.
///
/// egui moves the focus during the frame that holds the Tab press, and within that frame both
/// the field that loses the focus and the one that gains it read the frame's text: a digit
/// typed and Tab pressed within one frame (a fast typist, or a frame slowed by a busy machine)
/// reached both fields (found in session 27 by hand under Xvfb, `xdotool type 4; xdotool key
/// Tab`: the seed took the 4 and the start screen's size "513" became "5134", clamped to 4097
/// cells, three times out of three). Install with [`eframe::App::raw_input_hook`]; it asks
/// for the next frame when it holds events back.
#[derive(Debug, Default)]
pub struct FocusMoveDeferral {
    held: Vec<egui::Event>,
}

impl FocusMoveDeferral {
    /// Puts the events held from the last frame before this frame's, then holds back what
    /// [`split_at_focus_move`] leaves for the next frame.
    pub fn hook(&mut self, ctx: &egui::Context, raw: &mut egui::RawInput) {
        let mut events = std::mem::take(&mut self.held);
        events.append(&mut raw.events);
        let (now, later) = split_at_focus_move(events);
        raw.events = now;
        if !later.is_empty() {
            ctx.request_repaint();
        }
        self.held = later;
    }
}

/// Splits one frame's `events` (in order) into `(this frame's, the next frame's)` so that a
/// Tab press never shares a frame with typed input (key presses, text, paste, input-method
/// text) on either side: before the first Tab press that follows typed input, or else after
/// a leading Tab, before the first typed event that follows it. Other frames stay whole; the
/// order of the events never changes.
pub fn split_at_focus_move(mut events: Vec<egui::Event>) -> (Vec<egui::Event>, Vec<egui::Event>) {
    let typed = |e: &egui::Event| {
        matches!(e, egui::Event::Text(_) | egui::Event::Paste(_) | egui::Event::Ime(_))
            || matches!(e, egui::Event::Key { pressed: true, .. })
    };
    let tab = |e: &egui::Event| matches!(e, egui::Event::Key { key: Key::Tab, pressed: true, .. });
    let split = match events.iter().position(tab) {
        None => None,
        Some(t) if events[..t].iter().any(typed) => Some(t),
        Some(t) => events.iter().skip(t + 1).position(typed).map(|k| t + 1 + k),
    };
    match split {
        Some(k) => {
            let later = events.split_off(k);
            (events, later)
        }
        None => (events, Vec::new()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(key: Key, pressed: bool) -> egui::Event {
        egui::Event::Key {
            key,
            physical_key: Some(key),
            pressed,
            repeat: false,
            modifiers: egui::Modifiers::NONE,
        }
    }

    fn text(t: &str) -> egui::Event {
        egui::Event::Text(t.into())
    }

    /// The frame seen under Xvfb: the digit's press, text and release, then Tab's press and
    /// release. The digit stays in this frame; the Tab waits for the next.
    #[test]
    fn a_tab_after_typing_waits_for_the_next_frame() {
        let frame = vec![
            key(Key::Num4, true),
            text("4"),
            key(Key::Num4, false),
            key(Key::Tab, true),
            key(Key::Tab, false),
        ];
        let (now, later) = split_at_focus_move(frame);
        assert_eq!(now, vec![key(Key::Num4, true), text("4"), key(Key::Num4, false)]);
        assert_eq!(later, vec![key(Key::Tab, true), key(Key::Tab, false)]);
    }

    /// Frames whose Tab neither follows nor is followed by typing, and frames without a Tab,
    /// stay whole.
    #[test]
    fn other_frames_are_left_whole() {
        for frame in [
            vec![key(Key::Tab, true), key(Key::Tab, false)],
            vec![key(Key::Num7, true), text("7"), key(Key::Num7, false)],
            vec![key(Key::Num7, false), key(Key::Tab, true), key(Key::Tab, false)],
            vec![],
        ] {
            let (now, later) = split_at_focus_move(frame.clone());
            assert_eq!((now, later), (frame, vec![]));
        }
    }

    /// Typing after a Tab in its frame waits for the next frame (the new field's), and a second
    /// Tab (Tab held down) too, so each frame moves the focus by one field.
    #[test]
    fn typing_after_a_tab_waits_for_the_next_frame() {
        let frame = vec![key(Key::Tab, true), key(Key::Tab, false), key(Key::Num1, true), text("1")];
        let (now, later) = split_at_focus_move(frame);
        assert_eq!(now, vec![key(Key::Tab, true), key(Key::Tab, false)]);
        assert_eq!(later, vec![key(Key::Num1, true), text("1")]);
        let (now, later) = split_at_focus_move(vec![key(Key::Tab, true), key(Key::Tab, true)]);
        assert_eq!((now, later), (vec![key(Key::Tab, true)], vec![key(Key::Tab, true)]));
    }

    /// Held events come first in the next frame, before that frame's own, and are split again
    /// by the same rule: "4", Tab, "5" typed faster than the frames come reach the fields in
    /// three frames, in order.
    #[test]
    fn the_hook_replays_held_events_first() {
        let ctx = egui::Context::default();
        let mut d = FocusMoveDeferral::default();
        let mut frame = |events: Vec<egui::Event>| {
            let mut raw = egui::RawInput { events, ..Default::default() };
            d.hook(&ctx, &mut raw);
            raw.events
        };
        assert_eq!(frame(vec![text("4"), key(Key::Tab, true), key(Key::Tab, false)]), vec![text("4")]);
        assert_eq!(frame(vec![text("5")]), vec![key(Key::Tab, true), key(Key::Tab, false)]);
        assert_eq!(frame(vec![]), vec![text("5")]);
        assert_eq!(frame(vec![]), vec![]);
    }
}
