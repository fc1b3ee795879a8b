"""Document pages for signed-in readers: the original file, its text read in the page, one chunk."""
