/* rtid-bench's floor for a spawn: a compiled program that exits at once. */
int main(void)
{
	return 0;
}
