//! The bytes an item carries, made safe to show: a `data:` URL is checked before it
//! reaches a `src`, inline images and audio are shown from their own base64 (raw PCM
//! wrapped as WAV), and anything else is text. The viewer fetches nothing from outside.

use std::fmt::Write as _;

use super::page::{escape, size_text};

/// An image URL: shown as an image when it is a checked `data:image/…` URL, else as text
/// (the viewer fetches nothing from outside).
pub(super) fn image_url_html(out: &mut String, url: &str) {
    if safe_image_data_url(url) {
        let _ = write!(
            out,
            "<img class=\"item-image\" alt=\"image\" src=\"{}\">",
            escape(url)
        );
    } else {
        let _ = write!(out, "<div class=\"item-url\">{}</div>", escape(url));
    }
}

/// `data:image/<subtype>[;param…];base64,<base64>` with nothing but token characters in
/// the head and base64 characters in the data.
fn safe_image_data_url(url: &str) -> bool {
    let Some(rest) = url.strip_prefix("data:") else {
        return false;
    };
    let Some((head, data)) = rest.split_once(',') else {
        return false;
    };
    let mut parts = head.split(';');
    let mime = parts.next().unwrap_or_default();
    safe_mime(mime, "image/")
        && parts.all(|p| p.bytes().all(|b| is_token(b) || b == b'='))
        && head.ends_with(";base64")
        && is_base64(data)
}

fn is_token(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$&^_.+-".contains(&b)
}

/// `image/png`, `audio/pcm`, …: `family` then a non-empty token.
fn safe_mime(mime: &str, family: &str) -> bool {
    mime.get(..family.len())
        .is_some_and(|f| f.eq_ignore_ascii_case(family))
        && mime.len() > family.len()
        && mime[family.len()..].bytes().all(is_token)
}

/// Inline bytes (`data`, base64, of type `mime`): a summary, and the image or the audio
/// when the MIME type is safe.
pub(super) fn inline_html(out: &mut String, label: &str, mime: &str, data: &str) {
    let audio = safe_mime(mime, "audio/");
    let noun = if safe_mime(mime, "image/") {
        "Image"
    } else if audio {
        "Audio"
    } else {
        "Data"
    };
    let decoded = base64_decode(data);
    let size = decoded
        .as_ref()
        .map_or_else(|| "not base64".to_owned(), |b| size_text(b.len() as u64));
    let _ = write!(
        out,
        "<div class=\"item-note\">{label} {noun}: {} ({size})</div>",
        escape(mime)
    );
    let Some(bytes) = decoded else { return };
    if noun == "Image" {
        let _ = write!(
            out,
            "<img class=\"item-image\" alt=\"{}\" src=\"data:{};base64,{}\">",
            escape(mime),
            escape(mime),
            escape(data)
        );
    } else if audio {
        let src = if is_pcm(mime) {
            format!(
                "data:audio/wav;base64,{}",
                base64_encode(&wav_of_pcm(&bytes))
            )
        } else {
            format!("data:{mime};base64,{data}")
        };
        let _ = write!(
            out,
            "<audio class=\"item-audio\" controls src=\"{}\"></audio>",
            escape(&src)
        );
    }
}

fn is_pcm(mime: &str) -> bool {
    let lower = mime.to_ascii_lowercase();
    lower == "audio/pcm" || lower.starts_with("audio/l16")
}

/// Raw 16-bit PCM as a WAV file: 24 kHz, mono, as MMSP's audio models send it.
pub(super) fn wav_of_pcm(pcm: &[u8]) -> Vec<u8> {
    const RATE: u32 = 24_000;
    let len = u32::try_from(pcm.len()).unwrap_or(u32::MAX - 36);
    let mut wav = Vec::with_capacity(44 + pcm.len());
    wav.extend_from_slice(b"RIFF");
    wav.extend_from_slice(&(36 + len).to_le_bytes());
    wav.extend_from_slice(b"WAVEfmt ");
    wav.extend_from_slice(&16u32.to_le_bytes());
    wav.extend_from_slice(&1u16.to_le_bytes()); // PCM
    wav.extend_from_slice(&1u16.to_le_bytes()); // mono
    wav.extend_from_slice(&RATE.to_le_bytes());
    wav.extend_from_slice(&(RATE * 2).to_le_bytes()); // bytes per second
    wav.extend_from_slice(&2u16.to_le_bytes()); // block align
    wav.extend_from_slice(&16u16.to_le_bytes()); // bits per sample
    wav.extend_from_slice(b"data");
    wav.extend_from_slice(&len.to_le_bytes());
    wav.extend_from_slice(&pcm[..len as usize]);
    wav
}

fn is_base64(s: &str) -> bool {
    base64_decode(s).is_some()
}

/// Standard base64 with padding, as MMSP writes bytes; `None` for anything else.
pub(super) fn base64_decode(s: &str) -> Option<Vec<u8>> {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.decode(s).ok()
}

pub(super) fn base64_encode(bytes: &[u8]) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_round_trips_and_refuses_bad_text() {
        for bytes in [&b""[..], b"a", b"ab", b"abc", b"abcd", &[0, 255, 128, 7, 9]] {
            let text = base64_encode(bytes);
            assert_eq!(base64_decode(&text).as_deref(), Some(bytes), "{text}");
        }
        assert_eq!(base64_encode(b"hello"), "aGVsbG8=");
        for bad in ["abc", "a===", "ab=c", "ab==abcd", "ab\"=", "AAAA\"><"] {
            assert_eq!(base64_decode(bad), None, "{bad}");
        }
    }

    #[test]
    fn pcm_is_wrapped_as_24_khz_mono_16_bit_wav() {
        let wav = wav_of_pcm(&[1, 2, 3, 4]);
        assert_eq!(&wav[..4], b"RIFF");
        assert_eq!(u32::from_le_bytes(wav[4..8].try_into().unwrap()), 40);
        assert_eq!(&wav[8..16], b"WAVEfmt ");
        assert_eq!(u16::from_le_bytes([wav[22], wav[23]]), 1);
        assert_eq!(u32::from_le_bytes(wav[24..28].try_into().unwrap()), 24_000);
        assert_eq!(u16::from_le_bytes([wav[34], wav[35]]), 16);
        assert_eq!(&wav[36..40], b"data");
        assert_eq!(&wav[44..], &[1, 2, 3, 4]);
    }
}
