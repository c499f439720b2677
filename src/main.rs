//! The browser entry point.

// See lib.rs: the app's view types are deep.
#![recursion_limit = "256"]

fn main() {
    console_error_panic_hook::set_once();
    leptos::mount::mount_to_body(lens_web::App);
}
