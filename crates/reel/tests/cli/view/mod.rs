//! `reel view` as a user meets it: the server over raw HTTP (`http`: the headers every
//! answer carries, DNS rebinding, paths that would leave the directory or the MMSP
//! cache, the API's numbers against the trace and `reel stats`), the pages in a real
//! headless Chromium (`browser`: every view of real recordings, a diff, a merge, an
//! MMSP cache), a trace written to be hostile (`hostile`), and a trace still being
//! written (`live`). `support` starts the viewer and makes the recordings;
//! `webdriver` drives the browser.

mod browser;
mod hostile;
mod http;
mod live;
mod support;
mod webdriver;
