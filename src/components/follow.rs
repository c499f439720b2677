//! Following the newest message: a conversation's view stays at its end while answers
//! and their runs' output grow, unless the person scrolled up to read; then a "Jump to
//! the newest" button offers the way back.
//!
//! The list's content is watched with a `ResizeObserver`, so anything that makes it
//! taller (a token, a line of output, a chart that finished loading) is followed, not
//! only the changes a signal announces. Whatever scrolls is followed: the list where it
//! scrolls itself, else the page (narrow screens let the page scroll).

use leptos::{html::Div, prelude::*};
use wasm_bindgen::{JsCast, closure::Closure};

/// How close to the end still counts as at the end, in pixels: a person a line away from
/// the end is reading the newest message.
const AT_END_PX: i32 = 48;

/// Whether the view follows the newest message, and the list it follows.
#[derive(Clone, Copy)]
pub struct Follow {
    following: RwSignal<bool>,
    list: NodeRef<Div>,
    content: NodeRef<Div>,
    /// Where the view was at the last scroll event: only a move up is the person's.
    last_top: StoredValue<i32>,
}

impl Follow {
    /// Starts following (with an observer that ends with the calling view).
    pub fn start() -> Self {
        let follow = Self {
            following: RwSignal::new(true),
            list: NodeRef::new(),
            content: NodeRef::new(),
            last_top: StoredValue::new(0),
        };
        follow.observe_growth();
        follow
    }

    /// The scrolling list (its `node_ref`).
    pub fn list(self) -> NodeRef<Div> {
        self.list
    }

    /// The list's content, whose growth is followed (its `node_ref`).
    pub fn content(self) -> NodeRef<Div> {
        self.content
    }

    /// Whether the view is following (no button then).
    pub fn following(self) -> Signal<bool> {
        self.following.into()
    }

    /// Follows again, from the end (sending, opening a conversation, the button).
    pub fn to_end(self) {
        self.following.set(true);
        request_animation_frame(move || self.scroll_to_end());
    }

    /// After a scroll: at the end, following again; moved up by the person and away from
    /// the end, no longer. Content that grew below a view that has not moved (a scroll
    /// event can come after the growth it raced with) is not the person scrolling up.
    pub fn scrolled(self) {
        let Some((top, distance)) = self.position() else { return };
        let went_up = top < self.last_top.get_value() - 1;
        self.last_top.set_value(top);
        let following = if distance <= AT_END_PX {
            true
        } else if went_up {
            false
        } else {
            return;
        };
        if self.following.get_untracked() != following {
            self.following.set(following);
        }
    }

    /// Where the view is (its scroll offset) and how many pixels lie between the bottom
    /// of what is shown and the end; `None` before the list is on the page.
    fn position(self) -> Option<(i32, i32)> {
        match self.scroller()? {
            Scroller::List(list) => {
                Some((list.scroll_top(), list.scroll_height() - list.scroll_top() - list.client_height()))
            }
            Scroller::Page(page) => {
                let shown = window().inner_height().ok()?.as_f64()? as i32;
                Some((page.scroll_top(), page.scroll_height() - page.scroll_top() - shown))
            }
            Scroller::Nothing => Some((0, 0)),
        }
    }

    /// Scrolls to the end, and records it as where the view is: the scroll event this
    /// causes may arrive after more growth, and must not read as a move up.
    fn scroll_to_end(self) {
        let top = match self.scroller() {
            Some(Scroller::List(list)) => {
                list.set_scroll_top(list.scroll_height());
                list.scroll_top()
            }
            Some(Scroller::Page(page)) => {
                page.set_scroll_top(page.scroll_height());
                page.scroll_top()
            }
            Some(Scroller::Nothing) | None => return,
        };
        self.last_top.set_value(top);
    }

    /// What scrolls to show the list's end: the list itself where it is held to a height
    /// and overflows (wide screens); nothing where it is held to a height with room to
    /// spare (a panel beside a long page must not move the page); else the page, which
    /// grows with the list (narrow screens).
    fn scroller(self) -> Option<Scroller> {
        let list = self.list.get_untracked()?;
        if list.scroll_height() > list.client_height() + 1 {
            return Some(Scroller::List(list));
        }
        let content = self.content.get_untracked()?;
        if list.client_height() - content.offset_height() > AT_END_PX {
            return Some(Scroller::Nothing);
        }
        document().scrolling_element().map(Scroller::Page)
    }

    /// Follows the content's growth while following; the observer ends with the view.
    /// Made in an effect: only a browser has one (a server rendering runs no effects).
    fn observe_growth(self) {
        // The closure lives as long as the observer that calls it.
        let observer = StoredValue::new_local(None::<(web_sys::ResizeObserver, Closure<dyn FnMut()>)>);
        Effect::new(move |_| {
            let Some(content) = self.content.get() else { return };
            let on_resize = Closure::<dyn FnMut()>::new(move || {
                if self.following.get_untracked() {
                    self.scroll_to_end();
                }
            });
            let Ok(made) = web_sys::ResizeObserver::new(on_resize.as_ref().unchecked_ref()) else { return };
            made.observe(&content);
            if let Some(Some((old, _))) = observer.try_update_value(|o| o.replace((made, on_resize))) {
                old.disconnect();
            }
        });
        // The page scrolls on narrow screens, the list on wide ones.
        let page_scroll = window_event_listener(leptos::ev::scroll, move |_| self.scrolled());
        on_cleanup(move || {
            page_scroll.remove();
            observer.try_with_value(|o| o.as_ref().map(|(o, _)| o.disconnect()));
        });
    }
}

/// What scrolls to show a list's end.
enum Scroller {
    List(web_sys::HtmlDivElement),
    Page(web_sys::Element),
    Nothing,
}

/// The button that appears while the person reads further up.
#[component]
pub fn JumpToNewest(
    /// The view it brings back to the end.
    follow: Follow,
) -> impl IntoView {
    let jump = move |_| {
        follow.to_end();
        // The button goes away; the person lands where they write next.
        if let Some(input) = document().get_element_by_id("composer-input") {
            let _ = input.dyn_into::<web_sys::HtmlElement>().map(|i| i.focus());
        }
    };
    view! {
        <Show when=move || !follow.following().get()>
            <button type="button" class="jump-newest" data-testid="jump-newest" on:click=jump>
                "Jump to the newest ↓"
            </button>
        </Show>
    }
}
