#!/bin/bash -eu
# ClusterFuzzLite build: the same as the OSS-Fuzz project's (oss-fuzz/build.sh).
exec "$SRC/dlcfuzz/oss-fuzz/build.sh"
