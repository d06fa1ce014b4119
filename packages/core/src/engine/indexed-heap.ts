/** Something a heap can hold: it remembers its own slot so removal and re-keying are O(log n). */
export interface HeapItem {
  heapIndex: number;
}

const NOT_IN_HEAP = -1;

/**
 * Binary min-heap over items that carry their position (`heapIndex`, -1 when outside). An item
 * belongs to at most one heap at a time.
 */
export class IndexedHeap<T extends HeapItem> {
  private readonly items: T[] = [];

  constructor(private readonly before: (a: T, b: T) => boolean) {}

  get size(): number {
    return this.items.length;
  }

  peek(): T | undefined {
    return this.items[0];
  }

  contains(item: T): boolean {
    return item.heapIndex !== NOT_IN_HEAP && this.items[item.heapIndex] === item;
  }

  push(item: T): void {
    item.heapIndex = this.items.length;
    this.items.push(item);
    this.siftUp(item.heapIndex);
  }

  pop(): T | undefined {
    const top = this.items[0];
    if (top) this.remove(top);
    return top;
  }

  remove(item: T): boolean {
    if (!this.contains(item)) return false;
    const index = item.heapIndex;
    const last = this.items.pop()!;
    item.heapIndex = NOT_IN_HEAP;
    if (last !== item) {
      this.items[index] = last;
      last.heapIndex = index;
      this.siftUp(index);
      this.siftDown(last.heapIndex);
    }
    return true;
  }

  /** Re-positions an item whose key changed (or pushes it when outside). */
  update(item: T): void {
    if (!this.contains(item)) {
      this.push(item);
      return;
    }
    this.siftUp(item.heapIndex);
    this.siftDown(item.heapIndex);
  }

  private siftUp(start: number): void {
    let index = start;
    const item = this.items[index]!;
    while (index > 0) {
      const parentIndex = (index - 1) >> 1;
      const parent = this.items[parentIndex]!;
      if (!this.before(item, parent)) break;
      this.items[index] = parent;
      parent.heapIndex = index;
      index = parentIndex;
    }
    this.items[index] = item;
    item.heapIndex = index;
  }

  private siftDown(start: number): void {
    let index = start;
    const length = this.items.length;
    const item = this.items[index]!;
    while (true) {
      const left = 2 * index + 1;
      if (left >= length) break;
      const right = left + 1;
      const child = right < length && this.before(this.items[right]!, this.items[left]!) ? right : left;
      const childItem = this.items[child]!;
      if (!this.before(childItem, item)) break;
      this.items[index] = childItem;
      childItem.heapIndex = index;
      index = child;
    }
    this.items[index] = item;
    item.heapIndex = index;
  }
}

export const outsideHeap = (): number => NOT_IN_HEAP;
