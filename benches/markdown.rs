//! How fast answers render: Lens's own Markdown renderer against pulldown-cmark (which
//! it replaced to fit the web app's size budget), on the same answer, in the same run.
//! An answer is rendered again at every streamed token, so the whole stream's cost
//! matters as much as one render.
//!
//! cargo bench -p lens-web --no-default-features --features ssr --bench markdown

use std::time::{Duration, Instant};

use pulldown_cmark::{Event, Options, Parser, html};

/// A long answer of the kind models write: headings, emphasis, code, lists, a table.
fn answer() -> String {
    let part = "## Results for **Q3**\n\n\
        The revenue grew by *12%* over the quarter; see [the report](https://example.org/q3 \"Q3\") and \
        `df.groupby(\"region\")` for the split. Costs stayed ~~flat~~ level.\n\n\
        1. Load the data with `pandas`\n2. Group by region:\n   - north\n   - south\n3. Plot it\n\n\
        ```python\nimport pandas as pd\ndf = pd.read_csv(\"sales.csv\")\nprint(df.groupby(\"region\").total.sum())\n```\n\n\
        | region | total | change |\n|:--|--:|:-:|\n| north | 12 | +3% |\n| south | 30 | -1% |\n\n\
        > Note: figures are *unaudited* & may change.\n\n";
    part.repeat(12)
}

fn pulldown(src: &str) -> String {
    // As Lens used it: tables on, raw HTML shown as text.
    let parser = Parser::new_ext(src, Options::ENABLE_TABLES).map(|event| match event {
        Event::Html(raw) | Event::InlineHtml(raw) => Event::Text(raw),
        other => other,
    });
    let mut out = String::new();
    html::push_html(&mut out, parser);
    out
}

/// The median of `rounds` timings of `f`.
fn p50(rounds: usize, mut f: impl FnMut()) -> Duration {
    let mut times: Vec<Duration> = (0..rounds)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .collect();
    times.sort();
    times[rounds / 2]
}

/// Renders every prefix at word boundaries, as the page does while an answer streams.
fn stream(src: &str, render: fn(&str) -> String) -> usize {
    let mut bytes = 0;
    for (end, _) in src.match_indices(' ') {
        bytes += render(&src[..end]).len();
    }
    bytes
}

fn main() {
    let src = answer();
    let words = src.matches(' ').count();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let own = p50(201, || {
        std::hint::black_box(lens_web::markdown::to_html(std::hint::black_box(&src)));
    });
    let base = p50(201, || {
        std::hint::black_box(pulldown(std::hint::black_box(&src)));
    });
    println!("lens markdown figures (p50; a {} KB answer; 2-core machine)", src.len() / 1000);
    println!(
        "  one render              {:8.3} ms   pulldown-cmark {:8.3} ms  ({:.2}x)",
        ms(own),
        ms(base),
        own.as_secs_f64() / base.as_secs_f64()
    );
    let own = p50(5, || {
        std::hint::black_box(stream(&src, lens_web::markdown::to_html));
    });
    let base = p50(5, || {
        std::hint::black_box(stream(&src, pulldown));
    });
    println!(
        "  whole stream ({words} renders) {:8.1} ms   pulldown-cmark {:8.1} ms  ({:.2}x)",
        ms(own),
        ms(base),
        own.as_secs_f64() / base.as_secs_f64()
    );
}
