"""Cache limits, read by the nightly eviction run."""

#: Folder of the cache, relative to the project root.
CACHE_DIR = "data"

#: The cache may hold this many megabytes (MiB) of thumbnails.
CACHE_LIMIT_MB = 64

#: Entries not served for this many days are removed first.
MAX_AGE_DAYS = 7

#: Widths, in pixels, rendered for every photo.
THUMB_SIZES = (64, 128, 256)
