"""What an image or a PDF in a request costs, by Anthropic's published rules, from its base64 data alone.

Images (Anthropic's vision guide): an image whose long edge is over 1568 px, or that would cost over about
1,600 tokens, is first scaled down (aspect ratio kept) until it fits both; it then costs width x height / 750
tokens. The size is read from the file's own header (PNG, JPEG, GIF, WebP), without an imaging library.
PDFs (Anthropic's PDF guide): every page is sent as its text and as an image of the page, "typically
1,500-3,000 tokens per page": a page counts the middle of that range, as the text is not extracted here.
"""

from __future__ import annotations

import binascii
import math
import re
import struct
import zlib

MAX_EDGE = 1568  # px: a longer edge is scaled down
MAX_IMAGE_TOKENS = 1600  # an image costing more is scaled down to about this
PIXELS_PER_TOKEN = 750
PDF_PAGE_TOKENS = 2250  # the middle of the published 1,500-3,000 tokens a page
_HEADER_CHARS = 65536  # base64 characters decoded to find a JPEG's frame header (EXIF can come first)
_PDF_PAGE = re.compile(rb"/Type\s*/Page(?![A-Za-z])")
_PDF_STREAM = re.compile(rb"stream\r?\n(.*?)\r?\nendstream", re.DOTALL)
_JPEG_FRAMES = frozenset(range(0xC0, 0xD0)) - {0xC4, 0xC8, 0xCC}  # SOFn; C4, C8, CC are other segments


def image_tokens(width: int, height: int) -> int:
    """Tokens of a width x height image after Anthropic's resizing."""
    scale = min(1.0, MAX_EDGE / max(width, height),
                math.sqrt(MAX_IMAGE_TOKENS * PIXELS_PER_TOKEN / (width * height)))
    width, height = max(1, int(width * scale)), max(1, int(height * scale))
    return math.ceil(width * height / PIXELS_PER_TOKEN)


def _decode(data: str, chars: int | None = None) -> bytes:
    part = data if chars is None or chars >= len(data) else data[:chars - chars % 4]
    try:
        return binascii.a2b_base64(part)
    except (binascii.Error, ValueError):
        return b""


def _jpeg_size(data: bytes) -> tuple[int, int] | None:
    at = 2
    while at + 9 <= len(data):
        if data[at] != 0xFF:
            return None
        marker = data[at + 1]
        if marker == 0xFF:  # fill byte
            at += 1
            continue
        if marker in _JPEG_FRAMES:
            height, width = struct.unpack(">HH", data[at + 5:at + 9])
            return width, height
        if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7:  # markers without a length
            at += 2
            continue
        at += 2 + struct.unpack(">H", data[at + 2:at + 4])[0]
    return None


def _webp_size(data: bytes) -> tuple[int, int] | None:
    chunk = data[12:16]
    if chunk == b"VP8 " and len(data) >= 30:
        width, height = struct.unpack("<HH", data[26:30])
        return width & 0x3FFF, height & 0x3FFF
    if chunk == b"VP8L" and len(data) >= 25:
        bits = int.from_bytes(data[21:25], "little")
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    if chunk == b"VP8X" and len(data) >= 30:
        return int.from_bytes(data[24:27], "little") + 1, int.from_bytes(data[27:30], "little") + 1
    return None


def _size_from_header(head: bytes) -> tuple[int, int] | None:
    if head.startswith(b"\x89PNG\r\n\x1a\n") and len(head) >= 24:
        return struct.unpack(">II", head[16:24])
    if head[:6] in (b"GIF87a", b"GIF89a") and len(head) >= 10:
        return struct.unpack("<HH", head[6:10])
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return _webp_size(head)
    if head[:2] == b"\xff\xd8":
        return _jpeg_size(head)
    return None


def image_size(data: str) -> tuple[int, int] | None:
    """(width, height) of a base64 PNG, JPEG, GIF or WebP, from its header; None if unreadable."""
    size = _size_from_header(_decode(data, _HEADER_CHARS))
    if size is None and len(data) > _HEADER_CHARS and _decode(data, 16)[:2] == b"\xff\xd8":
        size = _jpeg_size(_decode(data))  # a JPEG whose frame header lies beyond a large EXIF block
    if size is None or size[0] <= 0 or size[1] <= 0:
        return None
    return size


def pdf_pages(data: str) -> int:
    """Pages of a base64 PDF: its page objects, also inside compressed object streams; at least 1."""
    raw = _decode(data)
    pages = len(_PDF_PAGE.findall(raw))
    if pages == 0:
        for stream in _PDF_STREAM.findall(raw):
            try:
                pages += len(_PDF_PAGE.findall(zlib.decompressobj().decompress(stream, 1 << 24)))
            except zlib.error:
                continue
    return max(1, pages)


def media_tokens(block: dict) -> tuple[int, bool] | None:
    """(tokens, size known) of an `image` or `document` content block; None for any other block. An image
    whose size cannot be read counts as the largest (the cap); a document other than a PDF, nothing."""
    kind = block.get("type")
    if kind not in ("image", "document"):
        return None
    source = block.get("source")
    if not isinstance(source, dict):
        source = {}
    data = source.get("data")
    if not isinstance(data, str) or source.get("type") != "base64":
        return (MAX_IMAGE_TOKENS, False) if kind == "image" else (0, False)
    if kind == "document":
        if source.get("media_type") != "application/pdf":
            return 0, False
        return pdf_pages(data) * PDF_PAGE_TOKENS, True
    size = image_size(data)
    return (image_tokens(*size), True) if size else (MAX_IMAGE_TOKENS, False)
