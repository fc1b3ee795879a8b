"""From a stored document to searchable chunks: submit, process (parse, chunk, embed, swap), re-chunk, the processing lease and its sweep."""
