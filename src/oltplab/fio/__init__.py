"""Storage profiles with fio: named profiles as data, job arguments, the fio process,
json+ results.

``profiles`` names the workloads HCIBench users know; ``spec`` holds the option table and the
frozen ``FioSpec``; ``target`` checks and prepares the directory or block device; ``jobs`` turns
one profile or job file into fio arguments; ``runner`` runs fio; ``parse`` reads its json+ output.
"""
