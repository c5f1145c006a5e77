"""Fleet tests: HAProxy in front of real `toolweave serve` replicas on one Postgres."""
