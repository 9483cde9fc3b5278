#!/bin/sh
# Prints the machine's Debian mirror: the first deb entry in apt's sources
# ending in /debian (deb.debian.org when there is none). The fetch scripts
# run it: one place reads apt's sources.
mirror=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list \
    /etc/apt/sources.list.d/*.sources 2>/dev/null |
    grep -oE 'https?://[^ ]*/debian/?( |$)' | head -n 1 | tr -d ' ')
mirror=${mirror%/}
echo "${mirror:-http://deb.debian.org/debian}"
