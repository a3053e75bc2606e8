//! A directed graph's edges, kept compactly: node `i`'s targets are one
//! slice of a single array. An import graph of a scan root with 40,000
//! files has about 350,000 edges; as a list per node of `usize` targets,
//! with each list's spare room, it took 6 MB, and each turned-around copy
//! as much again, at the scan's peak. Node numbers are `u32`: a scan holds
//! far fewer files than that.

/// The edges of a graph of nodes `0..len()`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Edges {
    /// Node `i`'s targets are `targets[starts[i]..starts[i + 1]]`.
    starts: Vec<u32>,
    targets: Vec<u32>,
}

impl Edges {
    /// The graph whose node `i` has the targets of the `i`th list.
    pub(crate) fn from_lists<L: IntoIterator<Item = usize>>(lists: impl IntoIterator<Item = L>) -> Edges {
        let mut edges = Edges { starts: vec![0], targets: Vec::new() };
        for list in lists {
            edges.targets.extend(list.into_iter().map(node));
            edges.starts.push(node(edges.targets.len()));
        }
        edges.targets.shrink_to_fit();
        edges
    }

    /// The number of nodes.
    pub(crate) fn len(&self) -> usize {
        self.starts.len() - 1
    }

    /// The targets of node `i`.
    pub(crate) fn of(&self, i: usize) -> impl Iterator<Item = usize> + '_ {
        let (start, end) = (self.starts[i] as usize, self.starts[i + 1] as usize);
        self.targets[start..end].iter().map(|&t| t as usize)
    }

    /// Every edge's target, node by node.
    pub(crate) fn targets(&self) -> impl Iterator<Item = usize> + '_ {
        self.targets.iter().map(|&t| t as usize)
    }

    /// The graph with every edge turned around.
    pub(crate) fn reversed(&self) -> Edges {
        self.reversed_where(|_, _| true)
    }

    /// The graph with every edge `from -> to` for which `keep(from, to)`
    /// turned around, and the others left out. `keep` is asked once per
    /// edge, in order of `from`.
    pub(crate) fn reversed_where(&self, mut keep: impl FnMut(usize, usize) -> bool) -> Edges {
        let kept: Vec<bool> = self.pairs().map(|(from, to)| keep(from, to)).collect();
        let kept_pairs = || self.pairs().zip(&kept).filter(|(_, k)| **k).map(|(pair, _)| pair);
        // Counted by target first, so that each node's sources get one slice.
        let mut starts = vec![0u32; self.len() + 1];
        for (_, to) in kept_pairs() {
            starts[to + 1] += 1;
        }
        for i in 1..starts.len() {
            starts[i] += starts[i - 1];
        }
        let mut next = starts.clone();
        let mut targets = vec![0u32; starts[self.len()] as usize];
        for (from, to) in kept_pairs() {
            targets[next[to] as usize] = node(from);
            next[to] += 1;
        }
        Edges { starts, targets }
    }

    /// Every edge as `(from, to)`, in order of `from`.
    fn pairs(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        (0..self.len()).flat_map(move |from| self.of(from).map(move |to| (from, to)))
    }

    /// Which nodes `roots` reach, themselves included.
    pub(crate) fn reachable(&self, roots: &[usize]) -> Vec<bool> {
        let mut seen = vec![false; self.len()];
        let mut stack: Vec<usize> = roots.to_vec();
        while let Some(n) = stack.pop() {
            if !std::mem::replace(&mut seen[n], true) {
                stack.extend(self.of(n).filter(|&m| !seen[m]));
            }
        }
        seen
    }
}

/// A node number as stored.
fn node(i: usize) -> u32 {
    // A scan's files are counted in the thousands, never in the billions.
    u32::try_from(i).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lists(edges: &Edges) -> Vec<Vec<usize>> {
        (0..edges.len()).map(|i| edges.of(i).collect()).collect()
    }

    #[test]
    fn each_node_keeps_its_targets_in_order() {
        let edges = Edges::from_lists([vec![2, 1], vec![], vec![0]]);
        assert_eq!(edges.len(), 3);
        assert_eq!(lists(&edges), [vec![2, 1], vec![], vec![0]]);
        assert_eq!(edges.targets().collect::<Vec<_>>(), [2, 1, 0]);
        assert_eq!(Edges::from_lists(Vec::<Vec<usize>>::new()).len(), 0);
    }

    #[test]
    fn turned_around_each_node_lists_its_sources_in_order() {
        let edges = Edges::from_lists([vec![1, 2], vec![2], vec![0], vec![]]);
        assert_eq!(lists(&edges.reversed()), [vec![2], vec![0], vec![0, 1], vec![]]);
        assert_eq!(edges.reversed().reversed(), edges);
        // Left out: the edges `keep` refuses, here those from node 0.
        assert_eq!(lists(&edges.reversed_where(|from, _| from != 0)), [vec![2], vec![], vec![1], vec![]]);
    }

    #[test]
    fn reachability_follows_edges_and_stops_on_cycles() {
        let edges = Edges::from_lists([vec![1], vec![2], vec![0], vec![]]);
        assert_eq!(edges.reachable(&[1]), [true, true, true, false]);
        assert_eq!(edges.reversed().reachable(&[3]), [false, false, false, true]);
    }
}
