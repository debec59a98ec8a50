"""Fault injection shared by tools/fault_campaign.py and tests/test_faults.py (see harness.py)."""
