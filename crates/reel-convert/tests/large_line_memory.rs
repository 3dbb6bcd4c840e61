//! The memory an import of a long line takes (issue 28, item 6): one copy of the line
//! plus the reader's growth step and a constant, counted by this test binary's own
//! allocator (a reallocation counts what it adds, as the system's `mremap` of a large
//! block does). The old path held the line four times: the reader's buffer, the
//! converter's JSON tree, the rebuilt message and the writer's line. One test in this
//! binary, so that nothing else allocates while it measures.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use reel_convert::import::{Output, import};
use reel_convert::{Format, Found};
use reel_redact::redact::Redactor;
use reel_trace::reader::GROW_STEP;

struct Counting;

static NOW: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

fn grew(by: usize) {
    let now = NOW.fetch_add(by, Ordering::Relaxed) + by;
    PEAK.fetch_max(now, Ordering::Relaxed);
}

// SAFETY: every call is passed on to the system allocator unchanged; only counted.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        grew(layout.size());
        // SAFETY: the caller's layout, as given.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        grew(layout.size());
        // SAFETY: the caller's layout, as given.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        NOW.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: a block this allocator gave out, with its layout.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if new_size >= layout.size() {
            grew(new_size - layout.size());
        } else {
            NOW.fetch_sub(layout.size() - new_size, Ordering::Relaxed);
        }
        // SAFETY: a block this allocator gave out, with its layout.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

#[test]
fn a_long_line_is_imported_in_one_copy_of_itself() {
    const LEN: usize = 40 << 20;
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("trace.jsonl");
    {
        let head = r#"{"v":1,"i":1,"dir":"s2c","kind":"response","id":1,"payload":{"result":{"contents":[{"uri":"file:///x.bin","blob":""#;
        let tail = "\"}]}},\"for_method\":\"resources/read\",\"wall_ms\":5}\n";
        let mut line = Vec::with_capacity(LEN + 256);
        line.extend_from_slice(br#"{"v":1,"i":0,"dir":"c2s","kind":"request","id":1,"payload":{"method":"resources/read","params":{"uri":"file:///x.bin"}},"wall_ms":0}"#);
        line.push(b'\n');
        line.extend_from_slice(head.as_bytes());
        let alphabet = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        let mut x = 7u64;
        line.extend((0..LEN).map(|_| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            alphabet[(x >> 58) as usize]
        }));
        line.extend_from_slice(tail.as_bytes());
        std::fs::write(&src, &line).unwrap();
    }
    let found = Found {
        format: Format::Mcptape,
        path: src,
        label: "big".into(),
    };
    let out = dir.path().join("out.jsonl");
    let redactor = Redactor::builtin();
    let before = NOW.load(Ordering::Relaxed);
    PEAK.store(before, Ordering::Relaxed);
    let done = import(&found, "big", Output::File(&out), &redactor).expect("imported");
    let peak = PEAK.load(Ordering::Relaxed) - before;
    assert_eq!(done.items, 2);
    let written = std::fs::metadata(&out).unwrap().len() as usize;
    assert!(written > LEN, "the blob is in the trace: {written} bytes");
    let bound = LEN + GROW_STEP + (8 << 20);
    assert!(
        peak <= bound,
        "an import of a {LEN}-byte line took {peak} bytes at its peak; one copy, the \
         reader's growth step and 8 MiB is {bound}"
    );
}
