//! `LiveTail`: the last lines a running step printed, shown under its folded summary so
//! every tab that shows the conversation sees the run moving without opening it.

use leptos::prelude::*;

/// How many lines of each stream the folded step shows.
const LINES: usize = 3;
/// Longer lines are cut: the tail is a glance, the unfolded step has it all.
const LINE_CHARS: usize = 160;

/// The last `n` lines of `text`, each as a terminal would leave it after a `\r`
/// (progress bars), cut to [`LINE_CHARS`].
pub fn last_lines(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text
        .trim_end_matches(['\n', '\r'])
        .rsplit('\n')
        .take(n)
        .map(|l| l.trim_end_matches('\r').rsplit('\r').next().unwrap_or(""))
        .collect();
    let cut = |l: &str| match l.char_indices().nth(LINE_CHARS) {
        Some((i, _)) => format!("{}…", &l[..i]),
        None => l.to_owned(),
    };
    lines.iter().rev().map(|l| cut(l)).collect::<Vec<_>>().join("\n")
}

#[component]
pub fn LiveTail(
    /// Output streamed so far: (stdout, stderr); `None` before the first chunk or once
    /// the step has ended.
    #[prop(into)]
    live: Signal<Option<(String, String)>>,
) -> impl IntoView {
    let out = move || live.with(|l| l.as_ref().map(|(o, _)| last_lines(o, LINES)).unwrap_or_default());
    let err = move || live.with(|l| l.as_ref().map(|(_, e)| last_lines(e, 1)).unwrap_or_default());
    view! {
        <Show when=move || live.with(|l| l.as_ref().is_some_and(|(o, e)| !o.is_empty() || !e.is_empty()))>
            <div class="live-tail" data-testid="live-tail" aria-label="Last lines of the running step">
                <Show when=move || !out().is_empty()>
                    <pre class="stdout" data-testid="live-tail-stdout">{out}</pre>
                </Show>
                <Show when=move || !err().is_empty()>
                    <pre class="stderr" data-testid="live-tail-stderr">{err}</pre>
                </Show>
            </div>
        </Show>
    }
}

#[cfg(test)]
mod tests {
    use super::last_lines;

    #[test]
    fn the_tail_is_the_last_lines_as_a_terminal_shows_them() {
        assert_eq!(last_lines("a\nb\nc\nd\n", 3), "b\nc\nd");
        assert_eq!(last_lines("only", 3), "only");
        assert_eq!(last_lines("", 3), "");
        assert_eq!(last_lines("10%\r50%\r90%\n", 3), "90%");
        let long = "é".repeat(500);
        let tail = last_lines(&long, 1);
        assert_eq!(tail.chars().count(), super::LINE_CHARS + 1, "cut on a character, with an ellipsis");
        assert!(tail.ends_with('…'));
    }
}
