# Starts tfimg's model server: the tfimg_serving package beside this file, which tfimg's
# binary carries (crates/core/src/render/templates/tfimg_serving/). Its settings come from
# the environment the image's entrypoint gives it.
from tfimg_serving.__main__ import main

main()
