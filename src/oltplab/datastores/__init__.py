"""Datastores: storage under test as a managed object. A file system (btrfs with its RAID
profiles, checksum and compression; ext4 or xfs as baselines) over block devices or loop
devices, mounted in a folder oltplab owns, described with its devices and space figures, and
destroyed without a trace."""
