complete --keep-order --exclusive --command tfimg --arguments "(COMPLETE=fish tfimg -- (commandline --current-process --tokenize --cut-at-cursor) (commandline --current-token))"
