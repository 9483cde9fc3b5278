"""Many runs toward one answer: sweep, the RFC 2544 search (ndr), compare,
conform and hostile; each drives run/ and writes through report/."""
